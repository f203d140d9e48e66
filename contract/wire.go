package contract

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// This file is the one place the Planner's requests and answers meet
// their protobuf messages: wireServer takes the messages off the wire for
// a Planner, wireClient puts them on it for a caller.

// wireServer serves a Planner as the gRPC service.
type wireServer struct {
	plannerpb.UnimplementedPlannerServer
	impl Planner
}

func (s *wireServer) Plan(ctx context.Context, m *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	req, err := planFromWire(m)
	if err != nil {
		return nil, err
	}
	a, err := s.impl.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	return &plannerpb.PlanResponse{Result: a.Result, Failed: a.Failed, Html: a.Page, SavedPlan: a.SavedPlan}, nil
}

func (s *wireServer) Inspect(ctx context.Context, m *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	d, err := s.impl.Inspect(ctx, &InspectRequest{
		Path: m.GetPath(), CacheDir: m.GetCacheDir(), UseCache: m.GetUseCache(), Registry: accessOf(m.GetRegistry()), Sources: m.GetSources(),
	})
	if err != nil {
		return nil, err
	}
	return &plannerpb.InspectResponse{Result: d.Result}, nil
}

func (s *wireServer) Catalog(ctx context.Context, m *plannerpb.CatalogRequest) (*plannerpb.CatalogResponse, error) {
	d, err := s.impl.Catalog(ctx, &CatalogRequest{
		InspectRequest: InspectRequest{Path: m.GetPath(), CacheDir: m.GetCacheDir(), UseCache: m.GetUseCache(), Registry: accessOf(m.GetRegistry()), Sources: m.GetSources()},
		Markdown:       m.GetMarkdown(), PublicKey: m.GetPublicKey(), Prerequisites: m.GetPrerequisites(), Carried: carriedOf(m.GetFiles()),
	})
	if err != nil {
		return nil, err
	}
	return &plannerpb.CatalogResponse{Result: d.Result}, nil
}

func (s *wireServer) Cache(ctx context.Context, m *plannerpb.CacheRequest) (*plannerpb.CacheResponse, error) {
	a, err := s.impl.Cache(ctx, &CacheRequest{
		Paths: m.GetPaths(), Prune: m.GetPrune(), CheckMode: m.GetCheckMode(), CacheDir: m.GetCacheDir(), Forget: m.GetForget(),
		Registry: accessOf(m.GetRegistry()),
	})
	if err != nil {
		return nil, err
	}
	return &plannerpb.CacheResponse{Result: a.Result, Changed: a.Changed}, nil
}

func (s *wireServer) Barrier(ctx context.Context, m *plannerpb.BarrierRequest) (*plannerpb.BarrierResponse, error) {
	a, err := s.impl.Barrier(ctx, &BarrierRequest{
		Barrier: m.GetBarrier(), Checks: m.GetChecks(),
		Cluster: options.Cluster{Kubeconfig: m.GetKubeconfig(), KubeconfigPrecedence: m.GetKubeconfigPrecedence(), Context: m.GetContext()},
		Timeout: timeoutOf(m.GetTimeoutSeconds()),
	})
	if err != nil {
		return nil, err
	}
	return &plannerpb.BarrierResponse{Result: a.Result, Failed: a.Failed}, nil
}

func (s *wireServer) Status(ctx context.Context, _ *plannerpb.StatusRequest) (*plannerpb.StatusResponse, error) {
	st, err := s.impl.Status(ctx)
	if err != nil {
		return nil, err
	}
	readings := make([]*plannerpb.Reading, 0, len(st.Readings))
	for _, r := range st.Readings {
		readings = append(readings, &plannerpb.Reading{Path: r.Path, Done: int64(r.Done), Total: int64(r.Total), Archive: r.Archive})
	}
	return &plannerpb.StatusResponse{
		Pid: st.Pid, BuildId: st.BuildID, Version: st.Version, ProtocolVersion: st.ProtocolVersion, StartedUnix: st.StartedUnix,
		Requests: st.Requests, Inflight: st.Inflight, ArchivesRead: st.ArchivesRead, CacheHits: st.CacheHits, ContentHits: st.ContentHits,
		Goroutines: st.Goroutines, Readings: readings,
	}, nil
}

// planFromWire is the plan request of a message: its options decoded
// strictly (DecodeOptions), an unknown option refused as an invalid
// argument.
func planFromWire(m *plannerpb.PlanRequest) (*PlanRequest, error) {
	o, err := DecodeOptions(m.GetOptions())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	req := &PlanRequest{Path: m.GetPath(), Options: o, Caller: options.Caller(m.GetCaller()), Page: m.GetHtml(), SavedPlan: m.GetSavedPlan(), Save: m.GetSave(),
		Carried: carriedOf(m.GetFiles()), Logins: loginsOf(m.GetLogins()), Approvals: namedOf(m.GetApprovals()), ApprovalsIgnored: ignoredOf(m.GetApprovalsIgnored())}
	if t := m.GetTimeUnix(); t != 0 {
		req.Time = time.Unix(t, 0)
	}
	return req, nil
}

// wireClient is a Planner that asks the daemon over gRPC.
type wireClient struct {
	rpc plannerpb.PlannerClient
}

func (c *wireClient) Plan(ctx context.Context, req *PlanRequest) (*PlanAnswer, error) {
	b, err := EncodeOptions(req.Options)
	if err != nil {
		return nil, err
	}
	m := &plannerpb.PlanRequest{Path: req.Path, Options: b, Caller: string(req.Caller), Html: req.Page, SavedPlan: req.SavedPlan, Save: req.Save,
		Files: carriedMessages(req.Carried), Logins: loginMessages(req.Logins), Approvals: namedMessages(req.Approvals), ApprovalsIgnored: ignoredMessages(req.ApprovalsIgnored)}
	if !req.Time.IsZero() {
		m.TimeUnix = req.Time.Unix()
	}
	r, err := c.rpc.Plan(ctx, m)
	if err != nil {
		return nil, err
	}
	return &PlanAnswer{Result: r.GetResult(), Failed: r.GetFailed(), Page: r.GetHtml(), SavedPlan: r.GetSavedPlan()}, nil
}

func (c *wireClient) Inspect(ctx context.Context, req *InspectRequest) (*InspectAnswer, error) {
	r, err := c.rpc.Inspect(ctx, &plannerpb.InspectRequest{
		Path: req.Path, CacheDir: req.CacheDir, UseCache: req.UseCache, Registry: accessMessage(req.Registry), Sources: req.Sources,
	})
	if err != nil {
		return nil, err
	}
	return &InspectAnswer{Result: r.GetResult()}, nil
}

func (c *wireClient) Catalog(ctx context.Context, req *CatalogRequest) (*CatalogAnswer, error) {
	r, err := c.rpc.Catalog(ctx, &plannerpb.CatalogRequest{
		Path: req.Path, CacheDir: req.CacheDir, UseCache: req.UseCache, Registry: accessMessage(req.Registry), Sources: req.Sources,
		Markdown: req.Markdown, PublicKey: req.PublicKey, Prerequisites: req.Prerequisites, Files: carriedMessages(req.Carried),
	})
	if err != nil {
		return nil, err
	}
	return &CatalogAnswer{Result: r.GetResult()}, nil
}

func (c *wireClient) Cache(ctx context.Context, req *CacheRequest) (*CacheAnswer, error) {
	r, err := c.rpc.Cache(ctx, &plannerpb.CacheRequest{
		Paths: req.Paths, Prune: req.Prune, CheckMode: req.CheckMode, CacheDir: req.CacheDir, Forget: req.Forget,
		Registry: accessMessage(req.Registry),
	})
	if err != nil {
		return nil, err
	}
	return &CacheAnswer{Result: r.GetResult(), Changed: r.GetChanged()}, nil
}

func (c *wireClient) Barrier(ctx context.Context, req *BarrierRequest) (*BarrierAnswer, error) {
	r, err := c.rpc.Barrier(ctx, &plannerpb.BarrierRequest{
		Barrier: req.Barrier, Checks: req.Checks, Kubeconfig: req.Cluster.Kubeconfig, KubeconfigPrecedence: req.Cluster.KubeconfigPrecedence, Context: req.Cluster.Context,
		TimeoutSeconds: int64(req.Timeout / time.Second), // whole seconds already (caller.Barrier)
	})
	if err != nil {
		return nil, err
	}
	return &BarrierAnswer{Result: r.GetResult(), Failed: r.GetFailed()}, nil
}

func (c *wireClient) Status(ctx context.Context) (*Status, error) {
	r, err := c.rpc.Status(ctx, &plannerpb.StatusRequest{})
	if err != nil {
		return nil, err
	}
	var readings []Reading
	for _, m := range r.GetReadings() {
		readings = append(readings, Reading{Path: m.GetPath(), Done: countOf(m.GetDone()), Total: countOf(m.GetTotal()), Archive: m.GetArchive()})
	}
	return &Status{
		Pid: r.GetPid(), BuildID: r.GetBuildId(), Version: r.GetVersion(), ProtocolVersion: r.GetProtocolVersion(), StartedUnix: r.GetStartedUnix(),
		Requests: r.GetRequests(), Inflight: r.GetInflight(), ArchivesRead: r.GetArchivesRead(), CacheHits: r.GetCacheHits(), ContentHits: r.GetContentHits(),
		Goroutines: r.GetGoroutines(), Readings: readings,
	}, nil
}

// countOf is a count from the wire, held between 0 and the largest int32
// (a count no directory reaches).
func countOf(n int64) int {
	return int(min(max(n, 0), 1<<31-1))
}

// timeoutOf is the wire's whole seconds as a duration (options.Seconds,
// the one conversion); none given, or not positive, is zero: the
// daemon's default.
func timeoutOf(n int64) time.Duration {
	d, err := options.Seconds(n)
	if err != nil {
		return 0
	}
	return d
}

// accessOf reads a registry access from the wire (nil: none given).
func accessOf(m *plannerpb.RegistryAccess) RegistryAccess {
	return RegistryAccess{
		PlainHTTP: m.GetPlainHttp(), InsecureSkipTLSVerify: m.GetInsecureSkipTlsVerify(), CAFile: m.GetRegistryCaFile(), CA: oneCarried(m.GetRegistryCa()),
		TimeoutSeconds: int(min(max(m.GetRegistryTimeoutSeconds(), 0), 1<<31-1)), Caller: options.Caller(m.GetCaller()), Logins: loginsOf(m.GetLogins()),
		RenderBudgetSeconds: int(min(max(m.GetRenderBudgetSeconds(), 0), 1<<31-1)),
		ReadBudgetGiB:       int(min(max(m.GetReadBudgetGib(), 0), 1<<31-1)),
	}
}

// oneCarried reads one carried file from the wire (nil: none).
func oneCarried(m *plannerpb.CarriedFile) *filesum.Carried {
	if m == nil {
		return nil
	}
	c := carriedOf([]*plannerpb.CarriedFile{m})
	return &c[0]
}

// carriedOf reads carried files from the wire.
func carriedOf(ms []*plannerpb.CarriedFile) []filesum.Carried {
	var out []filesum.Carried
	for _, m := range ms {
		out = append(out, filesum.Carried{Name: m.GetOption(), Path: m.GetPath(), Dir: m.GetDir(), Files: namedOf(m.GetFiles()), Err: m.GetError()})
	}
	return out
}

// carriedMessages are carried files for the wire.
func carriedMessages(cs []filesum.Carried) []*plannerpb.CarriedFile {
	var out []*plannerpb.CarriedFile
	for _, c := range cs {
		out = append(out, &plannerpb.CarriedFile{Option: c.Name, Path: c.Path, Dir: c.Dir, Files: namedMessages(c.Files), Error: c.Err})
	}
	return out
}

func namedOf(ms []*plannerpb.NamedBytes) []filesum.Named {
	var out []filesum.Named
	for _, m := range ms {
		out = append(out, filesum.Named{Name: m.GetName(), Data: m.GetData()})
	}
	return out
}

func namedMessages(ns []filesum.Named) []*plannerpb.NamedBytes {
	var out []*plannerpb.NamedBytes
	for _, n := range ns {
		out = append(out, &plannerpb.NamedBytes{Name: n.Name, Data: n.Data})
	}
	return out
}

func loginsOf(ms []*plannerpb.RegistryLogin) []Login {
	var out []Login
	for _, m := range ms {
		out = append(out, Login{Host: m.GetHost(), Username: m.GetUsername(), Password: m.GetPassword(), RefreshToken: m.GetRefreshToken(), AccessToken: m.GetAccessToken()})
	}
	return out
}

func loginMessages(ls []Login) []*plannerpb.RegistryLogin {
	var out []*plannerpb.RegistryLogin
	for _, l := range ls {
		out = append(out, &plannerpb.RegistryLogin{Host: l.Host, Username: l.Username, Password: l.Password, RefreshToken: l.RefreshToken, AccessToken: l.AccessToken})
	}
	return out
}

// accessMessage is a registry access for the wire.
func accessMessage(a RegistryAccess) *plannerpb.RegistryAccess {
	return &plannerpb.RegistryAccess{
		PlainHttp: a.PlainHTTP, InsecureSkipTlsVerify: a.InsecureSkipTLSVerify, RegistryCaFile: a.CAFile,
		RegistryTimeoutSeconds: int64(a.TimeoutSeconds), Caller: string(a.Caller), Logins: loginMessages(a.Logins), RegistryCa: oneCarriedMessage(a.CA),
		RenderBudgetSeconds: int64(a.RenderBudgetSeconds), ReadBudgetGib: int64(a.ReadBudgetGiB),
	}
}

func oneCarriedMessage(c *filesum.Carried) *plannerpb.CarriedFile {
	if c == nil {
		return nil
	}
	return carriedMessages([]filesum.Carried{*c})[0]
}

func ignoredOf(ms []*plannerpb.IgnoredFile) []IgnoredFile {
	var out []IgnoredFile
	for _, m := range ms {
		out = append(out, IgnoredFile{File: m.GetFile(), Reason: m.GetReason()})
	}
	return out
}

func ignoredMessages(is []IgnoredFile) []*plannerpb.IgnoredFile {
	var out []*plannerpb.IgnoredFile
	for _, i := range is {
		out = append(out, &plannerpb.IgnoredFile{File: i.File, Reason: i.Reason})
	}
	return out
}
