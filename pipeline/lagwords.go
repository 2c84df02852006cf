package pipeline

import "strings"

// mismatchEvidence is the lag report's wrong-group finding as the verdict quotes it: worded by
// MismatchWords (text is made in commands), else its reason and the groups it names, so that
// nothing is lost and no sentence is made here.
func (in Inputs) mismatchEvidence() string {
	if in.MismatchWords != nil {
		return in.MismatchWords(in.Lag)
	}
	mm := in.Lag.Mismatch
	names := []string{string(mm.Reason), mm.Documented}
	for _, g := range mm.Active {
		names = append(names, g.Group.Name)
	}
	return strings.Join(names, " ")
}
