package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aaep-tools/aaepkit/objstore"
)

// addStorageFlags gives every verb the flags that reach object storage for
// s3://BUCKET/KEY and s3://BUCKET/PREFIX/ inputs (app.recordings passes
// them to recording.Open). Credentials come from the standard AWS chain
// (environment, shared credentials file, instance role), never from flags.
func addStorageFlags(root *cobra.Command, o *objstore.Options) {
	pf := root.PersistentFlags()
	pf.StringVar(&o.Endpoint, "s3-endpoint", "", "S3-compatible server for s3:// inputs, e.g. http://127.0.0.1:9000 (default AWS, or $AWS_ENDPOINT_URL_S3)")
	pf.BoolVar(&o.PathStyle, "s3-path-style", false, "address buckets as HOST/BUCKET/KEY (the default for any --s3-endpoint that is not AWS)")
	pf.BoolVar(&o.Anonymous, "s3-no-sign", false, "send S3 requests unsigned, without credentials (a public bucket; a warning says so)")
}

// warnf prints a warning of the object storage (requests that go unsigned)
// on the command's stderr.
func (a *app) warnf(format string, args ...any) {
	fmt.Fprintf(a.Err, "aaep-replay: warning: "+format+"\n", args...)
}
