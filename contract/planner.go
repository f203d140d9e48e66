package contract

import (
	"context"
	"time"

	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// Planner is what the daemon serves, in the requests' and answers' own
// types (wire.go carries them over gRPC). Every method takes the caller's
// context first: its deadline and cancellation reach the daemon.
//
// The answers' documents (a plan's result, an inspection, a catalog, a
// warm-up's, a barrier's) are package document's types, carried in their
// one encoding (document.Marshal, JSON) as the daemon wrote them: the
// documents are what the modules return to Ansible, so the module passes
// the bytes on unchanged (a catalog can be megabytes) and no second
// schema, protobuf messages of every document, has to be kept in step
// with the types. Each answer reads its document as its type in one
// method (answers.go), strictly, and nowhere else.
type Planner interface {
	Plan(ctx context.Context, req *PlanRequest) (*PlanAnswer, error)
	Inspect(ctx context.Context, req *InspectRequest) (*InspectAnswer, error)
	Catalog(ctx context.Context, req *CatalogRequest) (*CatalogAnswer, error)
	Cache(ctx context.Context, req *CacheRequest) (*CacheAnswer, error)
	Barrier(ctx context.Context, req *BarrierRequest) (*BarrierAnswer, error)
	Status(ctx context.Context) (*Status, error)
}

// PlanRequest asks for the plan of a directory.
type PlanRequest struct {
	// Path is the directory holding the archives; absolute.
	Path string
	// Options are every other option of the request (the planner's
	// choices, the cluster, the cache); the caller's own files (saved,
	// output) are not the daemon's.
	Options options.Request
	// Caller is who asks: messages name options the way it gives them.
	Caller options.Caller
	// Page also asks for the plan (or the failure) drawn as one
	// self-contained HTML page, stating Time (zero: the daemon's clock).
	Page bool
	Time time.Time
	// SavedPlan is a saved plan, as read: check it against the directory
	// and the cluster now, and answer with its decisions or fail naming
	// every difference.
	SavedPlan []byte
	// Save also asks for the plan as a saved plan (when one is possible).
	Save bool
	// Carried are the files of the carried options (options
	// CarriedFiles), as the caller read them (package carry): the daemon
	// opens none of their paths.
	Carried []filesum.Carried
	// Logins are the caller's credentials for the registries its
	// registry sources name, for those hosts alone.
	Logins []Login
	// Approvals are the approvals beside the saved plan, as the caller
	// found and read them (Name: each one's path); ApprovalsIgnored the
	// files named like approvals it did not read, each with why.
	Approvals        []filesum.Named
	ApprovalsIgnored []IgnoredFile
}

// IgnoredFile is a file named like an approval that the caller did not
// read (not a regular file, over the bound, a name no approval holds),
// and why.
type IgnoredFile struct {
	File, Reason string
}

// Login is a caller's credentials for one registry host, resolved where
// the caller runs (its Docker config and credential helpers, as docker
// and oras read them) and sent for that host alone.
type Login struct {
	// Host is host[:port], as the source names it.
	Host string
	// Username and Password are a basic login; RefreshToken is an
	// identity token (exchanged for access tokens); AccessToken a
	// registry token sent as it is.
	Username, Password, RefreshToken, AccessToken string
}

// PlanAnswer is a plan, or why there is none.
type PlanAnswer struct {
	// Result is the plan's document (document.Result, its encoding: read
	// it with Plan), planned or failed; Failed says which.
	Result []byte
	Failed bool
	// Page is the page asked for; SavedPlan the saved plan asked for.
	Page      []byte
	SavedPlan []byte
}

// InspectRequest asks what a directory holds: its inspection.
type InspectRequest struct {
	// Path is the directory holding the archives; absolute.
	Path string
	// CacheDir is the cache directory, "" for the daemon's default;
	// UseCache answers unchanged archives from it.
	CacheDir string
	UseCache bool
	// Registry is how the registry of a registry source is reached.
	Registry RegistryAccess
	// Sources are more sources after Path (directories absolute, or
	// registry sources), read with it as one directory.
	Sources []string
}

// CatalogRequest asks for the catalog of a directory: what each package
// ships and claims. It reads the directory as an inspection does.
type CatalogRequest struct {
	InspectRequest
	// Markdown adds the catalog as Markdown (key "markdown"); PublicKey
	// (absolute) checks each signature with that key.
	Markdown  bool
	PublicKey string
	// Prerequisites (absolute) are the operator's documents, a file or
	// a directory, which the catalog shows in place of the archives'.
	Prerequisites string
	// Carried are the files PublicKey and Prerequisites name, as the
	// caller read them.
	Carried []filesum.Carried
}

// RegistryAccess is how the registry of a registry source (oci://) is
// reached, as the plan options of those names say, and who asks (its
// messages name the caller's options).
type RegistryAccess struct {
	PlainHTTP             bool
	InsecureSkipTLSVerify bool
	// CAFile is a PEM bundle (absolute) trusted beside the system's; CA
	// is what the caller read of it (package carry).
	CAFile string
	CA     *filesum.Carried
	// Logins are the caller's credentials for the registries it names.
	Logins []Login
	// TimeoutSeconds bounds each silence of the registry; 0 means the
	// default.
	TimeoutSeconds int
	Caller         options.Caller
	// RenderBudgetSeconds is the request's render budget (the option
	// render_budget), which travels with how the registry is reached
	// because these are the read options of a catalog, an inspection
	// and a warm-up; 0 means the default.
	RenderBudgetSeconds int
	// ReadBudgetGiB is the request's read budget (the option
	// read_budget), which travels here for the same reason; 0 means the
	// default.
	ReadBudgetGiB int
}

// RegistryAccessOf is the access the read options r give, for who.
func RegistryAccessOf(r options.Read, who options.Caller) RegistryAccess {
	return RegistryAccess{PlainHTTP: r.PlainHTTP, InsecureSkipTLSVerify: r.InsecureSkipTLSVerify, CAFile: r.RegistryCAFile, TimeoutSeconds: r.RegistryTimeout, Caller: who, RenderBudgetSeconds: r.RenderBudget, ReadBudgetGiB: r.ReadBudget}
}

// InspectAnswer is an inspection (document.Inspection, its encoding:
// read it with Inspection).
type InspectAnswer struct {
	Result []byte
}

// CatalogAnswer is a catalog (document.Catalog, its encoding: read it
// with Catalog).
type CatalogAnswer struct {
	Result []byte
}

// CacheRequest asks to cache (warm) or forget the archives of
// directories.
type CacheRequest struct {
	// Paths are the directories; absolute.
	Paths []string
	// Prune also forgets cached archives no longer under the paths.
	Prune bool
	// CheckMode reports what would change and writes nothing.
	CheckMode bool
	// CacheDir is the cache directory, "" for the daemon's default.
	CacheDir string
	// Forget forgets the paths' archives instead of caching them.
	Forget bool
	// Registry is how the registry of a registry source is reached.
	Registry RegistryAccess
}

// CacheAnswer is what a warm-up (or forget) did (document.Warmed, its
// encoding: read it with Warmed), and whether it changed the cache.
type CacheAnswer struct {
	Result  []byte
	Changed bool
}

// BarrierRequest asks to wait until a barrier holds on the caller's
// cluster.
type BarrierRequest struct {
	// Barrier is a plan item's barrier, as JSON; Checks are checks listed
	// by hand (a JSON list of {kind, name, namespace}), added to it.
	Barrier []byte
	Checks  []byte
	// Cluster is the caller's (never the daemon's own environment).
	Cluster options.Cluster
	// Timeout is how long to wait, to the second; zero: ten minutes.
	Timeout time.Duration
}

// BarrierAnswer is each check's last state (document.Barrier, its
// encoding: read it with Barrier), and whether the barrier did not hold.
type BarrierAnswer struct {
	Result []byte
	Failed bool
}

// Status is who the daemon is and what it has done.
type Status struct {
	Pid int64
	// BuildID and Version are the daemon binary's build and release; a
	// client of another build restarts it.
	BuildID         string
	Version         string
	ProtocolVersion uint32
	StartedUnix     int64
	// Requests served since start, and being served now.
	Requests uint64
	Inflight int64
	// Archives since start: read in full, answered by stat from the
	// cache, found in the cache by content after one hash.
	ArchivesRead uint64
	CacheHits    uint64
	ContentHits  uint64
	// Goroutines running in the daemon now.
	Goroutines int64
	// Readings are the reads of archives under way now (a plan's, a
	// catalog's), for a terminal's progress line.
	Readings []Reading
}

// Reading is how far one read of a request's archives has come.
type Reading struct {
	// Path is the source the request named first (an absolute directory
	// or a registry source): a caller finds its own read by it.
	Path string
	// Done of Total archives of the source being read.
	Done, Total int
	// Archive is the archive begun last (its file name, or a registry
	// reference), printable.
	Archive string
}
