// Package grpcbind names what AAEP's gRPC binding (Appendix B.5) leaves in
// captures and recordings, for the packages that write and read them
// without linking gRPC itself. The binding's generated code is in
// grpcbind/aaepv1, the capture side in transport/grpcsource, the serving
// side in grpcbind/grpcserve.
package grpcbind

// Transport is the transport name of gRPC origins and subscribers.
const Transport = "grpc"

// Record attributes.
const (
	// AttrMessageType holds an AaepMessage's message_type, when not empty.
	AttrMessageType = "message_type"
	// AttrMethod names the unary method whose answer a record holds; stream
	// messages have none.
	AttrMethod = "grpc_method"
)

// MethodGetManifest is the AttrMethod value of a recorded manifest: the
// producer's answer to GetManifest, a manifest document, not a message of
// the stream (a replay does not send it to subscribers).
const MethodGetManifest = "GetManifest"
