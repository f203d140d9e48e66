package cluster

// SetClusterRoleBounds sets the page of ClusterRoles' list calls and its
// bounds, for one test; the returned function restores them.
func SetClusterRoleBounds(page int64, roles, rules int) (restore func()) {
	p, r, u := clusterRolePage, maxClusterRoles, maxClusterRules
	clusterRolePage, maxClusterRoles, maxClusterRules = page, roles, rules
	return func() { clusterRolePage, maxClusterRoles, maxClusterRules = p, r, u }
}

// AnswerField is one line of the table of what an answer holds.
type AnswerField struct {
	Path []string
	// From is "lookup", "object", "empty map" or "each item".
	From string
	Why  string
}

// Answered is the table of what an answer holds, in its order.
func Answered() []AnswerField {
	names := map[fieldSource]string{fromLookup: "lookup", fromObject: "object", emptyMap: "empty map", eachItem: "each item"}
	out := make([]AnswerField, 0, len(answered))
	for _, f := range answered {
		out = append(out, AnswerField{Path: f.path, From: names[f.from], Why: f.why})
	}
	return out
}

// AnswerOf is obj as a lookup l answers it.
var AnswerOf = answerOf
