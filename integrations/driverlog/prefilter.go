package driverlog

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// prefilter says which patterns may match a line, in one pass over it.
//
// Most driver log lines are INFO chatter, and running a dozen regular
// expressions over each is slow (Go's engine has no literal acceleration for
// case-insensitive alternations). Every pattern here is built from literals,
// and every match contains one of its needles: literals found by walking the
// parsed expression. An Aho-Corasick automaton over all needles, folding
// ASCII case, finds them in a single pass; only the patterns whose needles
// occur are run.
type prefilter struct {
	class  [256]uint8 // byte → input class; 0: in no needle
	nclass int
	// delta maps row+class to the next state's row (state*nclass), bitwise
	// complemented when a needle ends in that state.
	delta  []int32
	out    []uint64 // state*words: patterns with a needle ending here
	always []uint64 // patterns without needles: always run
	words  int
}

// prefilters caches the automaton for the last set of patterns: building it
// costs more than scanning a small file. A prefilter is read-only once built.
var prefilters struct {
	sync.Mutex
	patterns []*regexp.Regexp
	filter   *prefilter
}

func cachedPrefilter(patterns []*regexp.Regexp) *prefilter {
	prefilters.Lock()
	defer prefilters.Unlock()
	if prefilters.filter == nil || !slices.Equal(prefilters.patterns, patterns) {
		prefilters.patterns = slices.Clone(patterns)
		prefilters.filter = newPrefilter(patterns)
	}
	return prefilters.filter
}

func newPrefilter(patterns []*regexp.Regexp) *prefilter {
	p := &prefilter{words: (len(patterns) + 63) / 64}
	classByte := []byte{0} // class → the byte (lower case) that stands for it
	p.always = make([]uint64, p.words)
	type node struct {
		next map[byte]int32
		out  []uint64
	}
	trie := []node{{next: map[byte]int32{}, out: make([]uint64, p.words)}}
	for i, re := range patterns {
		ns := patternNeedles(re)
		if ns == nil {
			p.always[i/64] |= 1 << (i % 64)
			continue
		}
		for _, n := range ns {
			s := int32(0)
			for j := 0; j < len(n); j++ {
				c := n[j]
				if p.class[c] == 0 {
					p.class[c] = uint8(len(classByte))
					if 'a' <= c && c <= 'z' {
						p.class[c-'a'+'A'] = p.class[c]
					}
					classByte = append(classByte, c)
				}
				next, ok := trie[s].next[c]
				if !ok {
					next = int32(len(trie))
					trie = append(trie, node{next: map[byte]int32{}, out: make([]uint64, p.words)})
					trie[s].next[c] = next
				}
				s = next
			}
			trie[s].out[i/64] |= 1 << (i % 64)
		}
	}
	p.nclass = len(classByte)

	// Breadth first: failure links, then a complete transition table.
	p.delta = make([]int32, len(trie)*p.nclass)
	p.out = make([]uint64, len(trie)*p.words)
	fail := make([]int32, len(trie))
	queue := []int32{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for w := range p.words {
			p.out[int(s)*p.words+w] = trie[s].out[w] | p.out[int(fail[s])*p.words+w]
		}
		for cl := 1; cl < p.nclass; cl++ { // class 0 always leads to the root
			idx := int(s)*p.nclass + cl
			if next, ok := trie[s].next[classByte[cl]]; ok {
				if s != 0 {
					fail[next] = p.delta[int(fail[s])*p.nclass+cl]
				}
				p.delta[idx] = next
				queue = append(queue, next)
			} else if s != 0 {
				p.delta[idx] = p.delta[int(fail[s])*p.nclass+cl]
			}
		}
	}
	// Premultiply the targets and flag the states where a needle ends, so
	// the scanning loop does one load per byte and no arithmetic.
	for i, next := range p.delta {
		row := next * int32(p.nclass)
		if hasOutput(p.out[int(next)*p.words : int(next+1)*p.words]) {
			row = ^row
		}
		p.delta[i] = row
	}
	return p
}

func hasOutput(words []uint64) bool {
	for _, w := range words {
		if w != 0 {
			return true
		}
	}
	return false
}

// candidates sets in dst (p.words long) the patterns that may match line.
//
// Needles are ASCII. Under case folding only two other runes match ASCII
// letters: the Kelvin sign (U+212A) matches k and the long s (U+017F) matches
// s; they are read as those letters. Any other non-ASCII byte is in no
// needle.
func (p *prefilter) candidates(line []byte, dst []uint64) {
	copy(dst, p.always)
	delta, class := p.delta, &p.class
	row := int32(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c >= utf8.RuneSelf {
			switch {
			case c == 0xE2 && i+2 < len(line) && line[i+1] == 0x84 && line[i+2] == 0xAA: // U+212A
				c, i = 'k', i+2
			case c == 0xC5 && i+1 < len(line) && line[i+1] == 0xBF: // U+017F
				c, i = 's', i+1
			}
		}
		row = delta[row+int32(class[c])]
		if row < 0 {
			row = ^row
			state := int(row) / p.nclass
			for w := range p.words {
				dst[w] |= p.out[state*p.words+w]
			}
		}
	}
}

func isCandidate(set []uint64, i int) bool { return set[i/64]&(1<<(i%64)) != 0 }

// patternNeedles returns lower-case literals, one of which is in every match
// of re, or nil when it found no such set.
func patternNeedles(re *regexp.Regexp) []string {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil { // cannot happen for a compiled pattern; stay correct anyway
		return nil
	}
	return needles(parsed.Simplify())
}

func needles(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		s := strings.ToLower(string(re.Rune))
		if s == "" || !isASCII(s) {
			return nil
		}
		return []string{s}
	case syntax.OpCapture, syntax.OpPlus:
		return needles(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needles(re.Sub[0])
		}
	case syntax.OpConcat:
		// Every part is required; the one whose shortest needle is the
		// longest filters best.
		var best []string
		for _, sub := range re.Sub {
			if n := needles(sub); n != nil && (best == nil || shortest(n) > shortest(best)) {
				best = n
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			n := needles(sub)
			if n == nil {
				return nil
			}
			all = append(all, n...)
		}
		return all
	}
	return nil
}

func shortest(ss []string) int {
	n := -1
	for _, s := range ss {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
