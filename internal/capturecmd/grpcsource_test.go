package capturecmd

// The tests that run capturecmd in this process record gRPC as
// aaep-capture-grpc does: with the gRPC source registered. The real
// aaep-capture hands gRPC endpoints over to that sibling (sibling_test.go).
import _ "github.com/aaep-tools/aaepkit/transport/grpcsource"
