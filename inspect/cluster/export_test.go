package cluster

// SetClusterRoleBounds sets the page of ClusterRoles' list calls and its
// bounds, for one test; the returned function restores them.
func SetClusterRoleBounds(page int64, roles, rules int) (restore func()) {
	p, r, u := clusterRolePage, maxClusterRoles, maxClusterRules
	clusterRolePage, maxClusterRoles, maxClusterRules = page, roles, rules
	return func() { clusterRolePage, maxClusterRoles, maxClusterRules = p, r, u }
}
