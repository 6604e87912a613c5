package recorder

import "github.com/aaep-tools/aaepkit/payload"

// jsonValid reports whether the decoded payload is valid JSON as a capture
// flags it (FlagInvalidJSON): an RFC 8259 text as encoding/json's Valid
// accepts it, so a byte-order mark or nesting beyond payload.MaxDepth makes
// it invalid. Like encoding/json, it does not check UTF-8 inside strings
// (FlagInvalidUTF8 says that).
func jsonValid(d *payload.Doc) bool {
	return d.Valid() && !d.BOM() && !d.Stats().TooDeep
}
