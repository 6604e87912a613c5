// Package capturecmd is the aaep-capture command: flags, wiring, progress
// and exit codes. cmd/aaep-capture and cmd/aaep-capture-grpc are its
// mains; they differ only in the sources they register.
package capturecmd
