package contract

import (
	"context"
	"net"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// recorder is a Planner that keeps the requests it was given and gives
// fixed answers.
type recorder struct {
	plan    *PlanRequest
	inspect *InspectRequest
	catalog *CatalogRequest
	cache   *CacheRequest
	barrier *BarrierRequest
}

func (r *recorder) Plan(_ context.Context, req *PlanRequest) (*PlanAnswer, error) {
	r.plan = req
	return &PlanAnswer{Result: []byte(`{"failed":true}`), Failed: true, Page: []byte("<p>"), SavedPlan: []byte("saved")}, nil
}

func (r *recorder) Inspect(_ context.Context, req *InspectRequest) (*InspectAnswer, error) {
	r.inspect = req
	return &InspectAnswer{Result: []byte(`{"candidates":[]}`)}, nil
}

func (r *recorder) Catalog(_ context.Context, req *CatalogRequest) (*CatalogAnswer, error) {
	r.catalog = req
	return &CatalogAnswer{Result: []byte(`{"packages":[]}`)}, nil
}

func (r *recorder) Cache(_ context.Context, req *CacheRequest) (*CacheAnswer, error) {
	r.cache = req
	return &CacheAnswer{Result: []byte(`{"added":[]}`), Changed: true}, nil
}

func (r *recorder) Barrier(_ context.Context, req *BarrierRequest) (*BarrierAnswer, error) {
	r.barrier = req
	return &BarrierAnswer{Result: []byte(`{"ready":false}`), Failed: true}, nil
}

func (r *recorder) Status(context.Context) (*Status, error) {
	return &Status{Pid: 1, BuildID: "b", Version: "v", ProtocolVersion: 2, StartedUnix: 3, Requests: 4, Inflight: 5, ArchivesRead: 6, CacheHits: 7, ContentHits: 8, Goroutines: 9}, nil
}

// overTheWire serves impl over an in-memory gRPC connection and returns
// the client side, as go-plugin joins them.
func overTheWire(t *testing.T, impl Planner) (Planner, *grpc.ClientConn) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	if err := (&grpcPlugin{impl: impl}).GRPCServer(nil, s); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet", grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c, err := (&grpcPlugin{}).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		t.Fatal(err)
	}
	return c.(Planner), conn
}

// TestEveryFieldCrossesTheWire: each request reaches the Planner behind
// the wire as it was sent, and each answer comes back as it was given.
func TestEveryFieldCrossesTheWire(t *testing.T) {
	rec := &recorder{}
	p, _ := overTheWire(t, rec)
	ctx := context.Background()

	o := options.Defaults()
	o.Architecture, o.Exclude, o.CacheDir = "arm64", []string{"a", "b"}, "/c"
	o.Mode, o.Kubeconfig, o.Context = options.ModeCluster, "/k", "ctx"
	carried := []filesum.Carried{
		{Name: "policy", Path: "/p.yaml", Files: []filesum.Named{{Name: "p.yaml", Data: []byte("allowed: {}")}}},
		{Name: "prerequisites", Path: "/ops", Dir: true, Files: []filesum.Named{{Name: "a.yaml", Data: []byte("a")}, {Name: "b.yml", Data: []byte("b")}}},
		{Name: "public_key", Path: "/k.pub", Err: "/k.pub is a FIFO"},
	}
	logins := []Login{{Host: "r.example:5000", Username: "u", Password: "p"}, {Host: "q.example", RefreshToken: "rt", AccessToken: "at"}}
	plan := &PlanRequest{Path: "/d", Options: o, Caller: options.CLICaller, Page: true, Time: time.Unix(1777638645, 0), SavedPlan: []byte("s"), Save: true,
		Carried: carried, Logins: logins, Approvals: []filesum.Named{{Name: "/plan.json.approved-by-x.sigstore.json", Data: []byte("{}")}}, ApprovalsIgnored: []IgnoredFile{{File: "/x", Reason: "a FIFO"}}}
	a, err := p.Plan(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rec.plan, plan) {
		t.Errorf("plan request\n got %+v\nwant %+v", rec.plan, plan)
	}
	if want := (&PlanAnswer{Result: []byte(`{"failed":true}`), Failed: true, Page: []byte("<p>"), SavedPlan: []byte("saved")}); !reflect.DeepEqual(a, want) {
		t.Errorf("plan answer %+v; want %+v", a, want)
	}
	if _, err := p.Plan(ctx, &PlanRequest{Path: "/d", Options: options.Defaults()}); err != nil || !rec.plan.Time.IsZero() || rec.plan.Page {
		t.Errorf("no page: %+v, %v; want no time, no page", rec.plan, err)
	}

	in := &InspectRequest{Path: "/d", CacheDir: "/c", UseCache: true, Sources: []string{"/e", "oci://r.example/ns"},
		Registry: RegistryAccess{PlainHTTP: true, InsecureSkipTLSVerify: true, TimeoutSeconds: 5, Caller: options.ModuleCaller, RenderBudgetSeconds: 7, ReadBudgetGiB: 3, CAFile: "/ca.pem", CA: &filesum.Carried{Name: "registry_ca_file", Path: "/ca.pem", Files: []filesum.Named{{Name: "ca.pem", Data: []byte("pem")}}}, Logins: logins}}
	d, err := p.Inspect(ctx, in)
	if err != nil || !reflect.DeepEqual(rec.inspect, in) || string(d.Result) != `{"candidates":[]}` {
		t.Errorf("inspect: %+v, %v; got %+v", d, err, rec.inspect)
	}

	cat := &CatalogRequest{InspectRequest: *in, Markdown: true, PublicKey: "/k.pub", Prerequisites: "/ops", Carried: carried[1:]}
	c, err := p.Catalog(ctx, cat)
	if err != nil || !reflect.DeepEqual(rec.catalog, cat) || string(c.Result) != `{"packages":[]}` {
		t.Errorf("catalog: %+v, %v; got %+v", c, err, rec.catalog)
	}

	cache := &CacheRequest{Paths: []string{"/a", "/b"}, Prune: true, CheckMode: true, CacheDir: "/c", Forget: true, Registry: in.Registry}
	w, err := p.Cache(ctx, cache)
	if err != nil || !reflect.DeepEqual(rec.cache, cache) || !w.Changed || string(w.Result) != `{"added":[]}` {
		t.Errorf("cache: %+v, %v; got %+v", w, err, rec.cache)
	}

	barrier := &BarrierRequest{Barrier: []byte(`{"crds":["x"]}`), Checks: []byte(`[]`), Cluster: options.Cluster{Kubeconfig: "/k", Context: "ctx", KubeconfigPrecedence: []string{"/k1", "/k2"}}, Timeout: 90 * time.Second}
	wa, err := p.Barrier(ctx, barrier)
	if err != nil || !reflect.DeepEqual(rec.barrier, barrier) || !wa.Failed || string(wa.Result) != `{"ready":false}` {
		t.Errorf("barrier: %+v, %v; got %+v", wa, err, rec.barrier)
	}

	st, err := p.Status(ctx)
	want, _ := rec.Status(ctx)
	if err != nil || !reflect.DeepEqual(st, want) {
		t.Errorf("status %+v, %v; want %+v", st, err, want)
	}
}

// TestUnknownOptionsAreAnInvalidArgument: options this daemon does not
// declare are refused before the Planner sees the request.
func TestUnknownOptionsAreAnInvalidArgument(t *testing.T) {
	rec := &recorder{}
	_, conn := overTheWire(t, rec)
	_, err := plannerpb.NewPlannerClient(conn).Plan(context.Background(), &plannerpb.PlanRequest{Path: "/d", Options: []byte(`{"no_such_option":1}`)})
	if status.Code(err) != codes.InvalidArgument || rec.plan != nil {
		t.Fatalf("err %v, the planner saw %+v; want InvalidArgument before it", err, rec.plan)
	}
}
