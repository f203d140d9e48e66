package cache

import (
	"github.com/colonel-byte/zarf-planner/cache/kept"
)

// Rendered plan documents are kept beside the database, as files in the
// cache directory's plans directory (package kept), so that a daemon that
// has just started, or the module without a daemon, answers a question
// asked before without planning again. The cache stores them as given,
// under a key its caller derives from everything the document depends on;
// it never interprets them.

// Plan returns the document kept under key, and whether it is a failure.
func (c *Cache) Plan(key kept.Key) (doc []byte, failed, ok bool) {
	return c.plans.Load(key)
}

// StorePlan keeps a document under key, dropping the oldest beyond
// kept.MaxPlans.
func (c *Cache) StorePlan(key kept.Key, doc []byte, failed bool) error {
	return c.plans.Save(key, doc, failed)
}

// MarkQuestion marks a question (kept.QuestionKey) before a plan of it is
// kept under its stamp, so the module looks for plans of questions marked
// alone (kept.Store.Asked).
func (c *Cache) MarkQuestion(question kept.Key) error {
	return c.plans.Mark(question)
}

// DropPlans removes every kept document and every question's mark.
func (c *Cache) DropPlans() error {
	return c.plans.Drop()
}
