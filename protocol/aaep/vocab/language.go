package vocab

import "strings"

// Languages is a list of language tags (BCP 47) that matches a tag equal to
// one of them ignoring case, or one being the other's bare primary language
// (Ch. 11: en matches en-US and en-US matches en; en-GB does not match
// en-US).
type Languages struct {
	list []string
	tags map[string]bool // lower-case tags, for large lists
}

// NewLanguages returns the matcher of list.
func NewLanguages(list []string) Languages {
	ls := Languages{list: list}
	if len(list) > smallSet {
		ls.tags = make(map[string]bool, len(list))
		for _, l := range list {
			ls.tags[strings.ToLower(l)] = true
		}
	}
	return ls
}

// Has reports whether tag matches one of the languages.
func (ls Languages) Has(tag string) bool {
	if ls.tags == nil {
		for _, l := range ls.list {
			if strings.EqualFold(l, tag) || strings.EqualFold(primaryLanguage(l), tag) || strings.EqualFold(l, primaryLanguage(tag)) {
				return true
			}
		}
		return false
	}
	t := strings.ToLower(tag)
	if ls.tags[t] || ls.tags[primaryLanguage(t)] {
		return true
	}
	// tag is a bare language: any listed region of it matches.
	for l := range ls.tags {
		if primaryLanguage(l) == t {
			return true
		}
	}
	return false
}

// primaryLanguage is the tag's first subtag ("en" of "en-US").
func primaryLanguage(tag string) string {
	if i := strings.IndexByte(tag, '-'); i > 0 {
		return tag[:i]
	}
	return tag
}
