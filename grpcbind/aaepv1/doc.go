// Package aaepv1 is the generated Go code of proto/aaep/v1/aaep.proto, the
// gRPC service of AAEP Appendix B.5.1 (aaep.v1.AaepService). Do not edit
// the .pb.go files: change the .proto and run `make proto`.
package aaepv1
