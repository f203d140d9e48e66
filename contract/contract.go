// Package contract is the wire contract between the zarf-planner daemon and
// its clients: the go-plugin handshake, the plugin map, and the gRPC adapters
// for the Planner service defined in plannerpb. It holds no planning logic,
// so the Ansible module can import it and stay small.
package contract

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

// ProtocolVersion is bumped whenever the Planner service changes
// incompatibly. Clients refuse a daemon of another protocol.
const ProtocolVersion = 2

// PluginName is the name the Planner is dispensed under.
const PluginName = "planner"

// Handshake is the go-plugin handshake shared by daemon and clients.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "ZARF_PLANNER_PLUGIN",
	MagicCookieValue: "b8c3f0a4-zarf-planner-daemon",
}

// flowWindow is the HTTP/2 flow-control window of both ends. A plan of a
// thousand packages is a document of about a megabyte; with gRPC's 64 KiB
// starting window it would cross the unix socket in a dozen round trips
// waiting for window updates. A fixed window this size lets it go at
// once (and turns off gRPC's window probing, which a local socket does
// not need).
const flowWindow = 16 << 20

// WindowDialOptions are the client's gRPC options for the daemon's socket.
func WindowDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(flowWindow), grpc.WithInitialConnWindowSize(flowWindow)}
}

// MaxRequest is the largest request the daemon takes: a saved plan at
// its largest (savedplan.MaxSize) and room for the rest; gRPC's own
// default, 4 MiB, would refuse a saved plan of a few thousand packages.
const MaxRequest = savedplan.MaxSize + 16<<20

// WindowServerOptions are the daemon's matching gRPC server options, and
// its bound on a request's size (MaxRequest).
func WindowServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(flowWindow), grpc.InitialConnWindowSize(flowWindow), grpc.MaxRecvMsgSize(MaxRequest)}
}

// Planner is what the daemon serves. Every method takes the caller's
// context first: its deadline and cancellation reach the daemon.
type Planner interface {
	Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error)
	Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error)
	CacheWarm(ctx context.Context, req *plannerpb.CacheWarmRequest) (*plannerpb.CacheWarmResponse, error)
	Wait(ctx context.Context, req *plannerpb.WaitRequest) (*plannerpb.WaitResponse, error)
	Status(ctx context.Context) (*plannerpb.StatusResponse, error)
}

// Plugins is the plugin map for go-plugin. On the daemon side Impl is set;
// clients use it with Impl nil.
func Plugins(impl Planner) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &grpcPlugin{impl: impl}}
}

// grpcPlugin adapts Planner to go-plugin's GRPCPlugin.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Planner
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	plannerpb.RegisterPlannerServer(s, &server{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Client{rpc: plannerpb.NewPlannerClient(c)}, nil
}

// server exposes a Planner as the gRPC service.
type server struct {
	plannerpb.UnimplementedPlannerServer
	impl Planner
}

func (s *server) Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	return s.impl.Plan(ctx, req)
}

func (s *server) Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	return s.impl.Inspect(ctx, req)
}

func (s *server) CacheWarm(ctx context.Context, req *plannerpb.CacheWarmRequest) (*plannerpb.CacheWarmResponse, error) {
	return s.impl.CacheWarm(ctx, req)
}

func (s *server) Wait(ctx context.Context, req *plannerpb.WaitRequest) (*plannerpb.WaitResponse, error) {
	return s.impl.Wait(ctx, req)
}

func (s *server) Status(ctx context.Context, _ *plannerpb.StatusRequest) (*plannerpb.StatusResponse, error) {
	return s.impl.Status(ctx)
}

// Client is the client side of the Planner service.
type Client struct {
	rpc plannerpb.PlannerClient
}

// Plan calls the daemon's Plan.
func (c *Client) Plan(ctx context.Context, req *plannerpb.PlanRequest) (*plannerpb.PlanResponse, error) {
	return c.rpc.Plan(ctx, req)
}

// Inspect calls the daemon's Inspect.
func (c *Client) Inspect(ctx context.Context, req *plannerpb.InspectRequest) (*plannerpb.InspectResponse, error) {
	return c.rpc.Inspect(ctx, req)
}

// CacheWarm calls the daemon's CacheWarm.
func (c *Client) CacheWarm(ctx context.Context, req *plannerpb.CacheWarmRequest) (*plannerpb.CacheWarmResponse, error) {
	return c.rpc.CacheWarm(ctx, req)
}

// Wait calls the daemon's Wait.
func (c *Client) Wait(ctx context.Context, req *plannerpb.WaitRequest) (*plannerpb.WaitResponse, error) {
	return c.rpc.Wait(ctx, req)
}

// Status calls the daemon's Status.
func (c *Client) Status(ctx context.Context) (*plannerpb.StatusResponse, error) {
	return c.rpc.Status(ctx, &plannerpb.StatusRequest{})
}

// ShutdownMethod is go-plugin's controller RPC that stops a plugin server.
// A go-plugin client calls it from Close and Kill; the daemon refuses it,
// because the daemon is shared and a short-lived client must never stop it.
const ShutdownMethod = "/plugin.GRPCController/Shutdown"
