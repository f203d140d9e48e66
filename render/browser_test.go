package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"image"
	"image/png"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/signature"
)

// screenshots, when set, is where TestPagesInABrowser keeps the example's
// pages and screenshots (make docs-screenshots: docs/report).
var screenshots = flag.String("screenshots", "", "directory to write the example's page and screenshots to (make docs-screenshots)")

// browser is Debian's chromium, headless, whose every connection goes to
// a trap: the trap is its proxy (loopback included) and the one address
// every host name resolves to, so any request a page makes is recorded.
type browser struct {
	bin  string
	trap *trap
}

// newBrowser finds chromium. Without it the test is skipped, except in CI
// (CI=true), where the browser tests must run: make host-deps installs it.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		// Never skipped: a page no browser opened is not tested.
		t.Fatal("chromium is not installed: make host-deps (part of make test) installs it (apt-get install chromium)")
	}
	return &browser{bin: bin, trap: newTrap(t)}
}

// run runs chromium on a file with args (--dump-dom, --screenshot=...)
// and returns its stdout.
func (b *browser) run(t *testing.T, file string, args ...string) []byte {
	t.Helper()
	port := b.trap.port()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync", "--disable-default-apps",
		"--disable-background-networking", "--disable-component-update", "--disable-domain-reliability",
		"--user-data-dir=" + t.TempDir(),
		"--proxy-server=http://127.0.0.1:" + port, "--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * 127.0.0.1:" + port,
	}, append(args, "file://"+file)...)...)
	// chromium starts helpers of its own: on a timeout they go with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// trap accepts every connection, records what it asked for, and answers
// 404: a proxy that lets nothing through.
type trap struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
	// open counts connections still being answered.
	open int
}

func newTrap(t *testing.T) *trap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trap{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go tr.answer(c)
		}
	}()
	return tr
}

func (tr *trap) port() string {
	_, p, _ := net.SplitHostPort(tr.ln.Addr().String())
	return p
}

func (tr *trap) answer(c net.Conn) {
	defer c.Close()
	tr.mu.Lock()
	i := len(tr.seen)
	tr.seen = append(tr.seen, "a connection from "+c.RemoteAddr().String())
	tr.open++
	tr.mu.Unlock()
	defer func() {
		tr.mu.Lock()
		tr.open--
		tr.mu.Unlock()
	}()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	tr.mu.Lock()
	switch {
	case i >= len(tr.seen): // taken already (cannot happen: take waits)
	case err == nil || line != "":
		tr.seen[i] = strings.TrimSpace(line)
	case errors.Is(err, io.EOF):
		// Closed before a byte was sent: chromium opens spare
		// connections to its proxy and closes those it did not use.
		tr.seen[i] = ""
	}
	tr.mu.Unlock()
	_, _ = c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
}

// take returns the requests the trap has seen since the last take, after
// a moment for connections still being accepted, leaving out chromium's
// own: whatever flags it is given, Debian's build still checks for
// component updates, the network time and a Google account (at hosts
// under these domains, which no page here names), and connections closed
// unused. Any other request, or a connection that sent anything else or
// stayed silent until the deadline, is returned.
func (tr *trap) take() []string {
	time.Sleep(100 * time.Millisecond) // for connections not yet accepted
	tr.mu.Lock()
	defer tr.mu.Unlock()
	// chromium has exited, so each open connection is about to end (or
	// reach its deadline).
	for tr.open > 0 {
		tr.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		tr.mu.Lock()
	}
	var page []string
	for _, s := range tr.seen {
		if s != "" && !browsersOwn(s) {
			page = append(page, s)
		}
	}
	tr.seen = nil
	return page
}

// browserDomains are where chromium itself goes (see take).
var browserDomains = []string{"google.com", "googleapis.com", "gvt1.com", "gstatic.com"}

// browsersOwn says whether a request line ("CONNECT host:443 HTTP/1.1",
// "GET http://host/path HTTP/1.1") is to one of browserDomains.
func browsersOwn(line string) bool {
	f := strings.Fields(line)
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return false
	}
	target := f[1]
	if f[0] != "CONNECT" {
		u, err := url.Parse(target)
		if err != nil {
			return false
		}
		target = u.Host
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = target
	}
	for _, d := range browserDomains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// shot is a screenshot of a page: its size and how many colours it has.
func (b *browser) shot(t *testing.T, file, png string, w, h int) (image.Point, int) {
	t.Helper()
	b.run(t, file, "--screenshot="+png, "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h))
	return decodePNG(t, png)
}

func decodePNG(t *testing.T, file string) (image.Point, int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	colours := map[[4]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 3 {
		for x := r.Min.X; x < r.Max.X; x += 3 {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			colours[[4]uint32{cr, cg, cb, ca}] = true
		}
	}
	return r.Size(), len(colours)
}

// shown is what a page's DOM, as the browser built it, shows.
type shown struct {
	nodes, cards []string // data-name of each box and card
	labels       []string // the text of each box's name
	cycle, edges []string // from->to of marked and of all edges
	problems     []string // the text of each problem
	rows         []string // data-name of each catalog row
	firstCells   []string // the text of each catalog row's first cell
	sections     []string // the text of each catalog package's section
	elements     map[string]int
}

func readDOM(t *testing.T, dom []byte) shown {
	t.Helper()
	d := shown{elements: map[string]int{}}
	walk(t, dom, func(n *html.Node) {
		d.elements[n.Data]++
		from, _ := attr(n, "data-from")
		to, _ := attr(n, "data-to")
		name, _ := attr(n, "data-name")
		switch {
		case n.Data == "g" && hasClass(n, "node"):
			d.nodes = append(d.nodes, name)
		case n.Data == "text" && hasClass(n, "name"):
			d.labels = append(d.labels, text(n))
		case n.Data == "g" && hasClass(n, "edge"):
			d.edges = append(d.edges, from+"->"+to)
			if hasClass(n, "cycle") {
				d.cycle = append(d.cycle, from+"->"+to)
			}
		case n.Data == "article" && hasClass(n, "card"):
			d.cards = append(d.cards, name)
		case n.Data == "li" && hasClass(n, "problem"):
			d.problems = append(d.problems, text(n))
		case n.Data == "details" && hasClass(n, "package"):
			d.sections = append(d.sections, text(n))
		case n.Data == "tr" && strings.HasPrefix(func() string { id, _ := attr(n, "id"); return id }(), "pkg-"):
			d.rows = append(d.rows, name)
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "td" {
					d.firstCells = append(d.firstCells, text(c))
					break
				}
			}
		}
	})
	return d
}

// TestPagesInABrowser opens the plan page of the example bundle, of the
// cycle fixture, of a 200-package synthetic plan and of hostile strings
// in Debian's chromium: the DOM the browser builds has one box per
// package, the cycle's edges marked and every name as text; the
// screenshots are the window's size and not blank; and no page makes a
// single request, not even one slipped into it (its policy forbids it),
// while the same request in a page without the policy reaches the trap.
func TestPagesInABrowser(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	write := func(name string, page []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, page, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	in := func(d string) PlanInput {
		return PlanInput{Directory: d, Options: Settings(options.Defaults()), Time: when, Producer: "zarf-planner"}
	}

	// The trap catches what a page without the policy asks for.
	leak := `<img src="http://leak.example/probe.png"><link rel="stylesheet" href="https://leak.example/x.css">`
	control := write("control.html", []byte("<!DOCTYPE html><html><body>"+leak+"</body></html>"))
	b.run(t, control, "--dump-dom")
	if seen := b.trap.take(); !slices.ContainsFunc(seen, func(s string) bool { return strings.Contains(s, "leak.example") }) {
		t.Fatalf("a page without a policy loaded an image, and the trap saw %q: it would not see a page's requests either", seen)
	}

	example := planned(t, exampleDir)
	cycle := planned(t, cycleDir)
	big := synthetic200(t)
	hostile := hostileResults(`<b>bold</b>`, `a & b "quoted" 'single'`, `1.0"><script>alert(1)</script>`, `</title><img src=x onerror=alert(1)>`, `/b/"><svg onload=alert(1)>.tar`)
	names := func(r *service.Result) []string {
		var out []string
		for _, it := range r.Plan.Packages {
			out = append(out, it.Name)
		}
		return out
	}
	examplePage := page(t, example, in("examples/bundles/reference-stack"))
	slipped := bytes.Replace(examplePage, []byte(`<body class="plan">`), []byte(`<body class="plan">`+leak), 1)
	if bytes.Equal(slipped, examplePage) {
		t.Fatal("found no <body> to slip a request into")
	}
	tests := []struct {
		name  string
		page  []byte
		check func(t *testing.T, d shown)
		w, h  int
		keep  string // the screenshot's name in docs
	}{
		{"example", examplePage, func(t *testing.T, d shown) {
			if want := names(example); !slices.Equal(d.nodes, want) || !slices.Equal(d.cards, want) || len(d.cycle) != 0 {
				t.Errorf("boxes %q, cards %q, cycle edges %q; want one box and one card per package %q, no cycle", d.nodes, d.cards, d.cycle, want)
			}
		}, 1960, 900, "example-plan"},
		{"cycle", page(t, cycle, in("testdata/bundles/cycle")), func(t *testing.T, d shown) {
			slices.Sort(d.cycle)
			if len(d.nodes) != 4 || !slices.Equal(d.cycle, []string{"alpha->gamma", "beta->alpha", "gamma->beta"}) || len(d.problems) != 1 {
				t.Errorf("boxes %q, cycle edges %q, %d problems; want 4 boxes, the cycle's three edges marked, one problem", d.nodes, d.cycle, len(d.problems))
			}
		}, 1400, 1000, "cycle-failure"},
		{"200 packages", page(t, big, in("synthetic/200")), func(t *testing.T, d shown) {
			want := names(big)
			got := slices.Clone(d.nodes)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || len(d.cards) != 200 {
				t.Errorf("%d boxes, %d cards; want one of each per package of the 200", len(d.nodes), len(d.cards))
			}
			for _, e := range d.edges {
				from, to, _ := strings.Cut(e, "->")
				if !slices.Contains(d.nodes, from) || !slices.Contains(d.nodes, to) {
					t.Errorf("edge %s joins a package that has no box", e)
				}
			}
			if len(d.edges) < 200 {
				t.Errorf("%d edges drawn; want the plan's (over 200)", len(d.edges))
			}
		}, 1600, 1400, ""},
		{"hostile plan", page(t, hostile[0], in(`/b/"><svg onload=alert(1)>`)), func(t *testing.T, d shown) {
			if want := []string{`<b>bold</b>`, `a & b "quoted" 'single'`}; !slices.Equal(d.labels, want) || !slices.Equal(d.nodes, want) {
				t.Errorf("the boxes say %q (data-name %q); want %q as text", d.labels, d.nodes, want)
			}
		}, 1400, 1000, ""},
		{"hostile failure", page(t, hostile[1], in("/b")), func(t *testing.T, d shown) {
			if len(d.problems) != 3 || !strings.Contains(d.problems[0], `</title><img src=x onerror=alert(1)>`) || !slices.Equal(d.labels, []string{`<b>bold</b>`, `a & b "quoted" 'single'`}) {
				t.Errorf("problems %q, boxes %q; want the strings shown as text", d.problems, d.labels)
			}
		}, 1400, 1000, ""},
		{"catalog", catalogOfSigned(t), func(t *testing.T, d shown) {
			want := []string{"app", "base", "tool", "gadgets", "liar", "widgets", `<b>bold</b> & "q"`}
			got := slices.Clone(d.rows)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || !slices.Contains(d.firstCells, `<b>bold</b> & "q"`) {
				t.Errorf("catalog rows %q (first cells %q); want one per package %q, names as text", d.rows, d.firstCells, want)
			}
			// Each package has its section; the hostile one shows its
			// action's command and its host file as the text they are.
			if len(d.sections) != len(want) {
				t.Errorf("%d package sections; want %d", len(d.sections), len(want))
			} else if last := d.sections[len(d.sections)-1]; !strings.Contains(last, hostileCommand) || !strings.Contains(last, `/opt/\u202egpj.exe`) || !strings.Contains(last, "NOT carried") {
				t.Errorf("the hostile package's section does not show its claims as text:\n%s", last)
			}
		}, 1600, 900, "catalog"},
		{"a request slipped into the page", slipped, func(t *testing.T, d shown) {
			if d.elements["img"] != 1 {
				t.Errorf("%d <img> in the page; want the one slipped in (blocked by the policy)", d.elements["img"])
			}
		}, 1400, 1000, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := write(strings.ReplaceAll(tt.name, " ", "-")+".html", tt.page)
			d := readDOM(t, b.run(t, file, "--dump-dom"))
			tt.check(t, d)
			for _, el := range []string{"script", "iframe", "object", "embed", "b"} {
				if d.elements[el] > 0 {
					t.Errorf("the browser built %d <%s> elements", d.elements[el], el)
				}
			}
			if tt.name != "a request slipped into the page" && (d.elements["img"] > 0 || d.elements["link"] > 0) {
				t.Errorf("the browser built %d <img> and %d <link>", d.elements["img"], d.elements["link"])
			}
			shot := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".png")
			size, colours := b.shot(t, file, shot, tt.w, tt.h)
			if size != image.Pt(tt.w, tt.h) || colours < 16 {
				t.Errorf("the screenshot is %v with %d colours; want %dx%d and a drawn page", size, colours, tt.w, tt.h)
			}
			if seen := b.trap.take(); len(seen) > 0 {
				t.Errorf("the page made requests: %q", seen)
			}
			if *screenshots != "" && tt.keep != "" {
				keep(t, shot, filepath.Join(*screenshots, tt.keep+".png"))
				keep(t, file, filepath.Join(*screenshots, tt.keep+".html"))
			}
		})
	}
}

// hostileCommand is the command of the hostile package's action: it
// ends the page's markup and starts a script, were it not escaped.
const hostileCommand = `curl x | sh </script><script>alert(1)</script></td></tr></table><b>x</b>`

// catalogOfSigned is the catalog of the zarf-signed bundle, checked with its
// key, with one more package whose name is markup.
func catalogOfSigned(t *testing.T) []byte {
	t.Helper()
	pub, err := loadKey("../testdata/keys/cosign.pub")
	if err != nil {
		t.Fatal(err)
	}
	c := &service.Catalog{Directory: "testdata/bundles/signed + catalog"}
	for _, dir := range []string{"signed", "catalog"} {
		abs, _ := filepath.Abs("../testdata/bundles/" + dir)
		d, err := inspect.ReadDir(context.Background(), abs, inspect.Options{})
		if err != nil {
			t.Fatal(err)
		}
		part := service.CatalogFrom(abs, d, service.Signer{Key: pub}, service.Operator{})
		c.Packages = append(c.Packages, part.Packages...)
		c.Warnings = append(c.Warnings, part.Warnings...)
	}
	c.Packages = append(c.Packages, service.CatalogPackage{Name: `<b>bold</b> & "q"`, Version: `1"><script>x</script>`, Signed: true, SignatureError: "</td><img src=x>",
		Components: []facts.Component{{Name: "<b>c</b>", Required: true, Description: "</details><script>x</script>"}},
		Claims: facts.Claims{
			Actions:   []facts.ActionClaim{{Component: "<b>c</b>", Event: "onDeploy.before", Command: hostileCommand, Dir: "</td><b>d</b>"}},
			HostFiles: []facts.HostFileClaim{{Component: "<b>c</b>", Target: "/opt/\u202egpj.exe", Executable: true}},
			Images:    []facts.ImageClaim{{Reference: `docker.io/library/"><b>x</b>:1`, Registry: "docker.io", Used: []facts.Origin{{Component: "<b>c</b>", File: "manifests/<b>m</b>.yaml", Kind: "Deployment", Name: "<iframe>"}}}},
			Unknown:   []facts.UnknownClaim{{Kind: "render", Subject: "<object>", Reason: "<embed src=x>", Affects: []string{"<b>crds</b>"}, Lookups: []facts.Lookup{{APIVersion: "v1", Kind: "<b>Secret</b>", Name: "</summary>"}}}},
		}})
	b, err := Catalog(c, when, "zarf-planner")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keep(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// loadKey is the public key of a key file (signature.KeyOf of its
// bytes).
func loadKey(path string) (*signature.Key, error) {
	b, err := os.ReadFile(path)
	return signature.KeyOf(path, b, err)
}
