package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// randomGraph is a layered graph: n boxes over a few levels, each box
// after the first level waiting for one to three boxes of earlier levels,
// and a few edges drawn backwards.
func randomGraph(seed uint64, n int) ([]box, []link) {
	r := rand.New(rand.NewPCG(seed, 7))
	var boxes []box
	for i := range n {
		boxes = append(boxes, box{key: fmt.Sprintf("p%03d", i), layer: r.IntN(1 + n/4), w: 150 + r.IntN(100)})
	}
	var links []link
	seen := map[link]bool{}
	for i, b := range boxes {
		for range r.IntN(4) {
			j := r.IntN(n)
			l := link{j, i}
			if boxes[j].layer < b.layer && !seen[l] || r.IntN(20) == 0 && !seen[l] {
				seen[l] = true
				links = append(links, l)
			}
		}
	}
	return boxes, links
}

var pathEnds = regexp.MustCompile(`^M(-?\d+) (-?\d+) .* (-?\d+) (-?\d+)$`)

// Every box stands in its level's column; no two boxes of a column
// overlap; every edge leaves its source and reaches its target (forward
// ones from the right side to the left side); and the same graph lays
// out the same way twice.
func TestLayoutKeepsBoxesApartAndEdgesAttached(t *testing.T) {
	for seed := range uint64(30) {
		in, links := randomGraph(seed, 5+int(seed)*4)
		g := layout(in, links)
		if again := layout(in, links); !reflect.DeepEqual(g, again) {
			t.Fatalf("seed %d: two layouts of one graph differ", seed)
		}
		cols := map[int][]box{}
		for i, b := range g.boxes {
			if b.x != g.columnX[b.layer] || b.w > g.columnW[b.layer] {
				t.Fatalf("seed %d: box %d (%s) at x %d width %d; its column is at %d, %d wide", seed, i, b.key, b.x, b.w, g.columnX[b.layer], g.columnW[b.layer])
			}
			if b.y < margin+headerH || b.y+b.h > g.height || b.x+b.w > g.width {
				t.Fatalf("seed %d: box %s at (%d,%d) %dx%d lies outside the drawing %dx%d", seed, b.key, b.x, b.y, b.w, b.h, g.width, g.height)
			}
			cols[b.layer] = append(cols[b.layer], b)
		}
		for l, col := range cols {
			slices.SortFunc(col, func(a, b box) int { return a.order - b.order })
			for k := 1; k < len(col); k++ {
				if col[k].y < col[k-1].y+col[k-1].h+gapPass {
					t.Fatalf("seed %d: column %d: %s (y %d) overlaps %s (y %d, height %d)", seed, l, col[k].key, col[k].y, col[k-1].key, col[k-1].y, col[k-1].h)
				}
			}
		}
		for k, l := range links {
			m := pathEnds.FindStringSubmatch(g.links[k].d)
			if m == nil {
				t.Fatalf("seed %d: path %q", seed, g.links[k].d)
			}
			sx, sy, tx, ty := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
			s, d := g.boxes[l.from], g.boxes[l.to]
			inside := func(x, y int, b box) bool { return x >= b.x && x <= b.x+b.w && y >= b.y && y <= b.y+b.h }
			if !inside(sx, sy, s) || !inside(tx, ty, d) {
				t.Fatalf("seed %d: edge %s -> %s runs from (%d,%d) to (%d,%d), not from box %+v to box %+v", seed, s.key, d.key, sx, sy, tx, ty, s, d)
			}
			if s.layer < d.layer && (sx != s.x+s.w || tx != d.x || g.links[k].back) {
				t.Fatalf("seed %d: forward edge %s -> %s does not run from the right side to the left side: %s", seed, s.key, d.key, g.links[k].d)
			}
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// In name order a waits above b and c above d, so a → d and b → c cross;
// the sweeps find the order without a crossing, and each box lines up
// with the one it waits for.
func TestLayoutUncrossesEdges(t *testing.T) {
	in := []box{{key: "a", layer: 0, w: 150}, {key: "b", layer: 0, w: 150}, {key: "c", layer: 1, w: 150}, {key: "d", layer: 1, w: 150}}
	g := layout(in, []link{{0, 3}, {1, 2}})
	var cols [][]int
	for l := range 2 {
		var col []int
		for i, b := range g.boxes {
			if b.layer == l {
				col = append(col, i)
			}
		}
		slices.SortFunc(col, func(x, y int) int { return g.boxes[x].order - g.boxes[y].order })
		cols = append(cols, col)
	}
	if c := g.crossings(cols); c != 0 {
		t.Fatalf("%d crossings left; orders %v", c, cols)
	}
	if g.boxes[0].y != g.boxes[3].y || g.boxes[1].y != g.boxes[2].y {
		t.Errorf("a at y %d, d at %d; b at %d, c at %d: each should line up with what it waits for", g.boxes[0].y, g.boxes[3].y, g.boxes[1].y, g.boxes[2].y)
	}
}

// An edge across several levels passes between the boxes of the columns
// it crosses, never through one.
func TestLayoutRoutesLongEdgesBetweenBoxes(t *testing.T) {
	in := []box{{key: "a", layer: 0, w: 150}, {key: "m1", layer: 1, w: 150}, {key: "m2", layer: 1, w: 150}, {key: "m3", layer: 1, w: 150}, {key: "z", layer: 2, w: 150}}
	g := layout(in, []link{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}, {0, 4}})
	var pass *box
	for i := range g.boxes {
		if g.boxes[i].pass {
			pass = &g.boxes[i]
		}
	}
	if pass == nil || pass.layer != 1 {
		t.Fatalf("no pass-through in level 1: %+v", g.boxes)
	}
	for _, b := range g.boxes[1:4] {
		if pass.y+pass.h > b.y && pass.y < b.y+b.h {
			t.Errorf("the edge a -> z passes through %s: y %d, box %d..%d", b.key, pass.y, b.y, b.y+b.h)
		}
	}
}

// A box that three others wait for sits level with the middle one, not at
// the top of its column.
func TestLayoutCentresABoxOnItsNeighbours(t *testing.T) {
	in := []box{{key: "a", layer: 0, w: 150}, {key: "c1", layer: 1, w: 150}, {key: "c2", layer: 1, w: 150}, {key: "c3", layer: 1, w: 150}}
	g := layout(in, []link{{0, 1}, {0, 2}, {0, 3}})
	a, c2 := g.boxes[0], g.boxes[2]
	if a.y+a.h/2 != c2.y+c2.h/2 {
		t.Errorf("a's middle at %d, c2's at %d; want them level", a.y+a.h/2, c2.y+c2.h/2)
	}
}
