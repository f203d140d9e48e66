// Package contract is the wire contract between the zarf-planner daemon and
// its clients: the Planner interface in its requests' and answers' own
// types (planner.go), the go-plugin handshake, the plugin map, and the one
// adapter that carries them as the gRPC service of plannerpb (wire.go).
// It holds no planning logic, so the Ansible module can import it and
// stay small.
package contract

import (
	"context"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/savedplan"
)

// ProtocolVersion is bumped whenever the Planner service changes
// incompatibly. Clients refuse a daemon of another protocol.
const ProtocolVersion = 3

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
// its largest (savedplan.MaxSize), every carried file at its bound
// (options.CarriedMax), the approvals beside the saved plan at theirs,
// and room for the rest; gRPC's own default, 4 MiB, would refuse a saved
// plan of a few thousand packages.
var MaxRequest = savedplan.MaxSize + int(options.CarriedMax(options.Request{})) + MaxApprovals*MaxApproval + 16<<20

// MaxApprovals is the most approval files beside a saved plan a caller
// sends, and MaxApproval the most bytes of each (a sigstore bundle is
// about a kilobyte); the rest are named and ignored.
const (
	MaxApprovals = 64
	MaxApproval  = 64 << 10
)

// ApprovalSuffix ends every approval's file name; ApprovalFile puts the
// key's fingerprint before it.
const ApprovalSuffix = ".sigstore.json"

// ApprovalFile is where the approval of plan by the key of fingerprint is
// written: beside the plan, named for the plan and the key, so approvals
// by several keys sit side by side and travel with the plan. The caller
// finds them by these names (carry.Approvals) and sends their bytes.
func ApprovalFile(plan, fingerprint string) string {
	fp := strings.TrimPrefix(fingerprint, "sha256:")
	if len(fp) > 16 {
		fp = fp[:16]
	}
	return plan + ".approved-by-" + fp + ApprovalSuffix
}

// WindowServerOptions are the daemon's matching gRPC server options, and
// its bound on a request's size (MaxRequest).
func WindowServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(flowWindow), grpc.InitialConnWindowSize(flowWindow), grpc.MaxRecvMsgSize(MaxRequest)}
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
	plannerpb.RegisterPlannerServer(s, &wireServer{impl: p.impl})
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &wireClient{rpc: plannerpb.NewPlannerClient(c)}, nil
}

// ShutdownMethod is go-plugin's controller RPC that stops a plugin server.
// A go-plugin client calls it from Close and Kill; the daemon refuses it,
// because the daemon is shared and a short-lived client must never stop it.
const ShutdownMethod = "/plugin.GRPCController/Shutdown"
