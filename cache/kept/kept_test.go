package kept

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, filepath.Join(dir, Subdir)
}

func TestOnlyWholeIntactDocumentsAreAnswered(t *testing.T) {
	s, dir := openStore(t)
	doc := []byte(`{"zarf_packages_to_deploy":[]}`)
	if err := s.Save(Key{1}, doc, true); err != nil {
		t.Fatal(err)
	}
	got, failed, ok := s.Load(Key{1})
	if !ok || !failed || !bytes.Equal(got, doc) {
		t.Fatalf("got %q failed=%v ok=%v; want the document kept as a failure", got, failed, ok)
	}
	if _, _, ok := s.Load(Key{2}); ok {
		t.Fatal("answered a key nothing was kept under")
	}
	file := filepath.Join(dir, Key{1}.String()+suffix)
	whole, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"a byte of the document changed", bytes.Replace(whole, []byte("deploy"), []byte("deplay"), 1)},
		{"cut short", whole[:len(whole)-3]},
		{"a byte appended", append(bytes.Clone(whole), ' ')},
		{"no header", doc},
		{"another format", bytes.Replace(whole, []byte("plan 1"), []byte("plan 2"), 1)},
		{"the failure flag changed", bytes.Replace(whole, []byte(" 1 "), []byte(" 0 "), 1)},
		{"empty", nil},
	} {
		if err := os.WriteFile(file, c.b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _, ok := s.Load(Key{1}); ok {
			t.Errorf("%s: answered %q", c.name, got)
		}
	}
}

func TestOnlyThisUsersPrivateFilesAreAnswered(t *testing.T) {
	s, dir := openStore(t)
	if err := s.Save(Key{1}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, Key{1}.String()+suffix)
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Load(Key{1}); ok {
		t.Error("answered a kept file others can read")
	}
	// A link to an intact document elsewhere is not followed.
	if err := s.Save(Key{2}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "doc.plan")
	if err := os.Rename(filepath.Join(dir, Key{2}.String()+suffix), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, Key{2}.String()+suffix)); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Load(Key{2}); ok {
		t.Error("answered through a symlink")
	}
	// A plans directory others can write is refused when opened.
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Dir(dir), false); err == nil {
		t.Error("opened a plans directory the group can write")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none"), false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("opening a missing cache: %v; want it not to exist", err)
	}
}

func TestKeepsTheNewestAndForgetsTheExpired(t *testing.T) {
	s, dir := openStore(t)
	for i := range MaxPlans + 1 {
		if err := s.Save(Key{byte(i)}, []byte(`{}`), false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // kept in the order of their mtimes
	}
	if _, _, ok := s.Load(Key{0}); ok {
		t.Fatalf("the oldest of %d documents was kept; want at most %d", MaxPlans+1, MaxPlans)
	}
	for i := 1; i <= MaxPlans; i++ {
		if _, _, ok := s.Load(Key{byte(i)}); !ok {
			t.Fatalf("document %d was dropped", i)
		}
	}
	s.now = func() time.Time { return time.Now().Add(TTL + time.Hour) }
	if _, _, ok := s.Load(Key{1}); ok {
		t.Fatal("answered a document kept longer than the TTL ago")
	}
	if err := s.Save(Key{100}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != (Key{100}).String()+suffix {
		t.Fatalf("after keeping one more, the directory holds %v; want only the new document", names)
	}
	if err := s.Drop(); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Load(Key{100}); ok {
		t.Fatal("a document survived Drop")
	}
	// The plans directory removed under an open store is made again.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(Key{101}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, (Key{101}).String()+suffix)); err != nil {
		t.Fatalf("keeping a plan after its directory was removed: %v", err)
	}
}

func TestPlanKeyNamesEverythingTheDocumentDependsOn(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "zarf-package-a-amd64-1.0.0.tar.zst")
	if err := os.WriteFile(archive, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(pub, []byte("key one"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("policy one"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := Question{Build: "b1", Path: dir, Plan: options.Plan{Architecture: "amd64"}, Read: options.Read{MaxInflation: 100, PublicKey: pub, Policy: pol}, Caller: options.ModuleCaller}
	key := func(q Question) Key {
		t.Helper()
		k, _, err := PlanKey(mustCarry(t, q))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := key(base)
	if again := key(base); again != want {
		t.Fatal("the same question about an unchanged directory keyed differently")
	}
	k, n, err := PlanKey(mustCarry(t, Question{Build: "b1", Path: dir, Plan: base.Plan, Read: base.Read, Caller: base.Caller, Count: func(string) bool { return true }}))
	if err != nil || k != want || n != 1 {
		t.Fatalf("counting changed the key (%v) or counted %d names (%v); want 1", k != want, n, err)
	}
	seen := map[Key]string{want: "the question"}
	for _, c := range []struct {
		name   string
		change func(q *Question)
	}{
		{"another build", func(q *Question) { q.Build = "b2" }},
		{"another plan option", func(q *Question) { q.Plan.Packages = []string{"a"} }},
		{"another read option", func(q *Question) { q.Read.Integrity = options.IntegrityFail }},
		{"another caller", func(q *Question) { q.Caller = options.CLICaller }},
		{"a warning", func(q *Question) { q.Warnings = []string{"cache moved aside"} }},
		{"the public key rewritten", func(q *Question) {
			if err := os.WriteFile(pub, []byte("key two"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the policy rewritten", func(q *Question) {
			if err := os.WriteFile(pol, []byte("policy two"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the archive rewritten", func(q *Question) {
			time.Sleep(10 * time.Millisecond)
			if err := os.WriteFile(archive, []byte("b"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		q := base
		c.change(&q)
		k := key(q)
		if other, ok := seen[k]; ok {
			t.Errorf("%s keys as %s does", c.name, other)
		}
		seen[k] = c.name
	}
	if _, _, err := PlanKey(mustCarry(t, Question{Path: filepath.Join(dir, "missing")})); err == nil {
		t.Error("keyed a directory that does not exist")
	}
}

// TestPlanKeyFollowsTheDeclarations: the files whose content is keyed are
// those the options declare content. A request type declaring one more
// content option keys that file's content too, and a question with a
// path over its declared bound cannot be keyed.
func TestPlanKeyFollowsTheDeclarations(t *testing.T) {
	type extended struct {
		options.Request
		Extra string `json:"extra" type:"path" content:"16" help:"a file whose content decides the plan"`
	}
	dir := t.TempDir()
	extra := filepath.Join(t.TempDir(), "extra")
	if err := os.WriteFile(extra, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := Question{Build: "b1", Path: dir, Caller: options.ModuleCaller}
	key := func() Key {
		t.Helper()
		k, _, err := PlanKey(mustCarry(t, q, options.Files(extended{Extra: extra})...))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	plain, _, err := PlanKey(mustCarry(t, q))
	if err != nil {
		t.Fatal(err)
	}
	one := key()
	if one == plain {
		t.Fatal("a declared content option left the key as it is without it")
	}
	if err := os.WriteFile(extra, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key() == one {
		t.Error("rewriting a declared content option's file under the same name left the key as it was")
	}
	if err := os.WriteFile(extra, bytes.Repeat([]byte("x"), 17), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := carried(q, options.Files(extended{Extra: extra})...); err == nil {
		t.Error("keyed a file over its declared bound")
	}
}

// TestQuestionKeyIsThePlanKeyWithoutTheDirectory: everything PlanKey keys
// besides the directory's files changes a question's key, and so does
// the path; what the directory holds does not, and walking it is not
// needed (a directory that does not exist keys too).
func TestQuestionKeyIsThePlanKeyWithoutTheDirectory(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "zarf-package-a-amd64-1.0.0.tar.zst")
	if err := os.WriteFile(archive, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("policy one"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := Question{Build: "b1", Path: dir, Plan: options.Plan{Architecture: "amd64"}, Read: options.Read{MaxInflation: 100, Policy: pol}, Caller: options.ModuleCaller}
	key := func(q Question) Key {
		t.Helper()
		k, err := QuestionKey(mustCarry(t, q))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := key(base)
	planKey, _, err := PlanKey(mustCarry(t, base))
	if err != nil {
		t.Fatal(err)
	}
	if want == planKey {
		t.Fatal("a question keys as its plan does")
	}
	// Another size: the stamp changes whatever the clock's granularity.
	if err := os.WriteFile(archive, []byte("bb"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := key(base); got != want {
		t.Error("rewriting an archive changed the question's key")
	}
	for _, same := range []string{dir + "/", dir + "//", dir + "/."} {
		q := base
		q.Path = same
		if key(q) != want {
			t.Errorf("the path %s keys the question otherwise than %s, which the stamp keys alike", same, dir)
		}
	}
	if again, _, err := PlanKey(mustCarry(t, base)); err != nil || again == planKey {
		t.Fatalf("rewriting an archive left the plan's key as it was (%v)", err)
	}
	missing := base
	missing.Path = filepath.Join(dir, "missing")
	if _, err := QuestionKey(mustCarry(t, missing)); err != nil {
		t.Errorf("a question about a directory that does not exist: %v; want it keyed without walking it", err)
	}
	seen := map[Key]string{want: "the question"}
	for _, c := range []struct {
		name   string
		change func(q *Question)
	}{
		{"another path", func(q *Question) { q.Path = filepath.Join(dir, "other") }},
		{"another build", func(q *Question) { q.Build = "b2" }},
		{"another plan option", func(q *Question) { q.Plan.Priorities = map[string]int{"a": 1} }},
		{"another read option", func(q *Question) { q.Read.Integrity = options.IntegrityFail }},
		{"another caller", func(q *Question) { q.Caller = options.CLICaller }},
		{"a warning", func(q *Question) { q.Warnings = []string{"cache moved aside"} }},
		{"the policy rewritten", func(q *Question) {
			if err := os.WriteFile(pol, []byte("policy two"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		q := base
		c.change(&q)
		k := key(q)
		if other, ok := seen[k]; ok {
			t.Errorf("%s keys the question as %s does", c.name, other)
		}
		seen[k] = c.name
	}
	if _, err := QuestionKey(Question{Build: "b1", Path: dir}); err == nil {
		t.Error("keyed a question without the sums of its content options")
	}
}

// TestMarksSayWhichQuestionsWereAsked: a question is Asked once marked,
// and never before; keeping a document bounds the marks apart from the
// documents (a quarter at once, the oldest by the time it was marked or
// renewed first, whatever its name), and Drop removes them with the
// documents.
func TestMarksSayWhichQuestionsWereAsked(t *testing.T) {
	s, dir := openStore(t)
	oldest := Key{0xff} // its name sorts after every other mark's
	if s.Asked(oldest) {
		t.Fatal("a question never marked was asked")
	}
	if err := s.Mark(oldest); err != nil {
		t.Fatal(err)
	}
	if !s.Asked(oldest) || s.Asked(Key{2}) {
		t.Fatalf("after marking one question: asked %v, another asked %v; want only the one", s.Asked(oldest), s.Asked(Key{2}))
	}
	// A mark and a document under the same key are two files: neither
	// stands for the other.
	if _, _, ok := s.Load(oldest); ok {
		t.Fatal("a mark was loaded as a document")
	}
	if err := s.Save(Key{2}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	if s.Asked(Key{2}) {
		t.Fatal("keeping a document marked its key as a question")
	}
	marks := func() int {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dir, "*"+askedSuffix))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	time.Sleep(50 * time.Millisecond) // well past the file clock's granularity: the first mark is the oldest
	for i := range MaxQuestions {
		if err := s.Mark(Key{3, byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := marks(); n != MaxQuestions+1 {
		t.Fatalf("marking dropped marks: %d; want all %d until a document is kept", n, MaxQuestions+1)
	}
	// Marked again, a mark is renewed: the next oldest go first.
	time.Sleep(50 * time.Millisecond)
	if err := s.Mark(oldest); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(Key{2}, []byte(`{}`), false); err != nil {
		t.Fatal(err)
	}
	newest := Key{3, byte(MaxQuestions - 1), byte((MaxQuestions - 1) >> 8)}
	if !s.Asked(oldest) || s.Asked(Key{3}) || !s.Asked(newest) {
		t.Fatalf("after renewing the first mark and keeping a document: the renewed asked %v, the next oldest %v, the newest %v; want the renewed and the newest kept",
			s.Asked(oldest), s.Asked(Key{3}), s.Asked(newest))
	}
	if n := marks(); n != MaxQuestions-MaxQuestions/4-1 {
		t.Fatalf("%d marks after keeping a document beside %d; want %d", n, MaxQuestions+1, MaxQuestions-MaxQuestions/4-1)
	}
	// Marks do not count against MaxPlans, nor documents against
	// MaxQuestions.
	for i := range MaxPlans {
		if err := s.Save(Key{4, byte(i)}, []byte(`{}`), false); err != nil {
			t.Fatal(err)
		}
	}
	for i := range MaxPlans {
		if _, _, ok := s.Load(Key{4, byte(i)}); !ok {
			t.Fatalf("document %d of %d was dropped beside the marks", i, MaxPlans)
		}
	}
	if n := marks(); n != MaxQuestions-MaxQuestions/4-1 {
		t.Fatalf("keeping documents dropped marks: %d left", n)
	}
	// Marks go by their number alone: marks older than the TTL stay, and
	// a document over MaxDoc, not kept, still bounds them.
	s.now = func() time.Time { return time.Now().Add(TTL + time.Hour) }
	if err := s.Save(Key{5}, make([]byte, MaxDoc+1), false); err != nil {
		t.Fatal(err)
	}
	if n := marks(); n != MaxQuestions-MaxQuestions/4-1 || !s.Asked(newest) {
		t.Fatalf("keeping a document after the TTL left %d marks; want them all", n)
	}
	for i := range MaxQuestions/4 + 1 { // MaxQuestions in all
		if err := s.Mark(Key{6, byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(Key{5}, make([]byte, MaxDoc+1), false); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := s.Load(Key{5}); ok {
		t.Fatal("a document over MaxDoc was kept")
	}
	if n := marks(); n != MaxQuestions-MaxQuestions/4-1 {
		t.Fatalf("a document over MaxDoc left %d marks; want them bounded to %d", n, MaxQuestions-MaxQuestions/4-1)
	}
	s.now = time.Now
	if err := s.Drop(); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Fatalf("after Drop the plans directory holds %d files; want none", len(names))
	}
}
