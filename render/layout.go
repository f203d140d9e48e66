package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The layout draws a graph left to right, one column per level: a
// layered drawing in the manner of Sugiyama. An edge that spans several
// levels passes through a thin placeholder in each column between its
// ends, so it runs between boxes rather than through them; the order of
// each column is improved by barycentre sweeps, keeping the order with
// the fewest crossings; then each box moves towards its neighbours as far
// as the order and the gaps allow.
//
// Everything is integer arithmetic on inputs in a fixed order, so the same
// graph gives the same drawing, byte for byte, on every machine (floating
// point may round differently where a CPU fuses a multiply and an add).

// Sizes, in SVG user units (CSS pixels).
const (
	margin     = 24  // around the drawing
	headerH    = 28  // the column titles above the boxes
	columnGap  = 130 // between columns: room for the edges' labels
	boxMinH    = 40  // a box with few edges
	inPortGap  = 18  // between incoming edges on a box's left side (each has a label)
	outPortGap = 7   // between outgoing edges on its right side
	boxPad     = 12  // above the first and below the last port
	passH      = 2   // the height of an edge passing through a column
	gapBox     = 14  // between a box and what is next to it in a column
	gapPass    = 6   // between two passing edges
	sweeps     = 12  // barycentre sweeps over the columns
	settle     = 6   // passes moving boxes towards their neighbours
	backDepth  = 34  // how far below its boxes an edge drawn backwards dips
)

// box is one thing to draw in a column: a package, a placeholder, or an
// edge passing through.
type box struct {
	key   string // orders ties: a name, or the edge's for a pass-through
	layer int
	w, h  int
	pass  bool
	x, y  int
	order int
	// left and right are the boxes next to it on its edges, in the
	// columns before and after.
	left, right []int
}

// link is an edge to draw between two boxes (by index).
type link struct{ from, to int }

// drawn is a laid-out link: its SVG path and where its label goes.
type drawn struct {
	d              string
	labelX, labelY int
	// back is an edge drawn backwards or within a column (a cycle's
	// closing edge): it dips below the boxes.
	back bool
}

// drawing is the result of layout.
type drawing struct {
	boxes         []box // the inputs first, in their order, then the pass-throughs
	links         []drawn
	width, height int
	columnX       []int // the left edge of each column
	columnW       []int
}

// layout places boxes (their key, layer and width set; heights follow
// from their edges) and routes links between them.
func layout(in []box, links []link) drawing {
	g := drawing{boxes: slices.Clone(in)}
	n := len(in)
	layers := 0
	for _, b := range in {
		layers = max(layers, b.layer+1)
	}
	// Forward links become chains through pass-throughs; the rest are
	// drawn backwards.
	type chain struct {
		ids  []int // boxes from source to target
		back bool
	}
	chains := make([]chain, len(links))
	inCount, outCount := make([]int, n), make([]int, n)
	for i, l := range links {
		from, to := g.boxes[l.from], g.boxes[l.to]
		if to.layer <= from.layer {
			chains[i] = chain{ids: []int{l.from, l.to}, back: true}
			continue
		}
		ids := []int{l.from}
		for layer := from.layer + 1; layer < to.layer; layer++ {
			g.boxes = append(g.boxes, box{key: fmt.Sprintf("%s\x00%s", from.key, to.key), layer: layer, h: passH, pass: true})
			ids = append(ids, len(g.boxes)-1)
		}
		ids = append(ids, l.to)
		for k := 1; k < len(ids); k++ {
			a, b := ids[k-1], ids[k]
			g.boxes[a].right = append(g.boxes[a].right, b)
			g.boxes[b].left = append(g.boxes[b].left, a)
		}
		outCount[l.from]++
		inCount[l.to]++
		chains[i] = chain{ids: ids}
	}
	for i := range n {
		g.boxes[i].h = max(boxMinH, inCount[i]*inPortGap+boxPad, outCount[i]*outPortGap+boxPad)
	}

	cols := make([][]int, layers)
	for i, b := range g.boxes {
		cols[b.layer] = append(cols[b.layer], i)
	}
	for _, col := range cols {
		slices.SortStableFunc(col, func(a, b int) int { return cmp.Compare(g.boxes[a].key, g.boxes[b].key) })
	}
	g.order(cols)
	g.place(cols)

	// Routes: ports spread along a box's sides in the order of what is
	// at the other end, so edges into one box do not cross at its side.
	inPorts, outPorts := map[[2]int]int{}, map[[2]int]int{}
	for i := range g.boxes {
		b := &g.boxes[i]
		if b.pass {
			continue
		}
		byY := func(ids []int) []int {
			s := slices.Clone(ids)
			slices.SortStableFunc(s, func(x, y int) int {
				return cmp.Or(cmp.Compare(g.boxes[x].y, g.boxes[y].y), cmp.Compare(g.boxes[x].order, g.boxes[y].order))
			})
			return s
		}
		for k, o := range byY(b.left) {
			inPorts[[2]int{o, i}] = b.y + (k+1)*b.h/(len(b.left)+1)
		}
		for k, o := range byY(b.right) {
			outPorts[[2]int{i, o}] = b.y + (k+1)*b.h/(len(b.right)+1)
		}
	}
	for _, c := range chains {
		if c.back {
			g.links = append(g.links, g.backward(c.ids[0], c.ids[1]))
			continue
		}
		g.links = append(g.links, g.forward(c.ids, inPorts, outPorts))
	}

	for i := range g.boxes {
		g.height = max(g.height, g.boxes[i].y+g.boxes[i].h)
		g.width = max(g.width, g.boxes[i].x+g.boxes[i].w)
	}
	extra := 0
	for _, c := range chains {
		if c.back {
			extra = max(extra, backDepth*(1+abs(g.boxes[c.ids[0]].layer-g.boxes[c.ids[1]].layer)))
		}
	}
	g.width += margin + 48 // room for a package's edge to itself
	g.height += margin + extra
	return g
}

// order improves the order of each column: sweeps alternate left to
// right and right to left, sorting each column by the barycentre of its
// boxes' neighbours in the column just swept; the order with the fewest
// crossings seen is kept.
func (g *drawing) order(cols [][]int) {
	number := func() {
		for _, col := range cols {
			for k, i := range col {
				g.boxes[i].order = k
			}
		}
	}
	number()
	best, bestCross := clone2(cols), g.crossings(cols)
	for s := 0; s < sweeps && bestCross > 0; s++ {
		forward := s%2 == 0
		for step := 1; step < len(cols); step++ {
			l := step
			if !forward {
				l = len(cols) - 1 - step
			}
			col := cols[l]
			type key struct{ sum, n int }
			keys := map[int]key{}
			for _, i := range col {
				nb := g.boxes[i].left
				if !forward {
					nb = g.boxes[i].right
				}
				k := key{}
				for _, o := range nb {
					k.sum += g.boxes[o].order
					k.n++
				}
				if k.n == 0 { // no neighbour there: it keeps its place
					k = key{g.boxes[i].order, 1}
				}
				keys[i] = k
			}
			slices.SortStableFunc(col, func(a, b int) int {
				ka, kb := keys[a], keys[b]
				return cmp.Compare(ka.sum*kb.n, kb.sum*ka.n)
			})
			for k, i := range col {
				g.boxes[i].order = k
			}
		}
		if c := g.crossings(cols); c < bestCross {
			best, bestCross = clone2(cols), c
		}
	}
	for l := range cols {
		copy(cols[l], best[l])
	}
	number()
}

// crossings counts the pairs of edge segments that cross between
// neighbouring columns.
func (g *drawing) crossings(cols [][]int) int {
	total := 0
	type seg struct{ a, b int }
	for l := 0; l+1 < len(cols); l++ {
		var segs []seg
		for _, i := range cols[l] {
			for _, o := range g.boxes[i].right {
				segs = append(segs, seg{g.boxes[i].order, g.boxes[o].order})
			}
		}
		for x := range segs {
			for y := x + 1; y < len(segs); y++ {
				if (segs[x].a-segs[y].a)*(segs[x].b-segs[y].b) < 0 {
					total++
				}
			}
		}
	}
	return total
}

// place gives every box its coordinates: x by column; y by stacking each
// column in its order, then moving each box towards the middle of its
// neighbours as far as its column's order and gaps allow.
func (g *drawing) place(cols [][]int) {
	x := margin
	for _, col := range cols {
		w := 0
		for _, i := range col {
			w = max(w, g.boxes[i].w)
		}
		g.columnX, g.columnW = append(g.columnX, x), append(g.columnW, w)
		for _, i := range col {
			g.boxes[i].x = x
			if g.boxes[i].pass {
				g.boxes[i].w = w
			}
		}
		x += w + columnGap
	}
	gap := func(a, b int) int {
		if g.boxes[a].pass && g.boxes[b].pass {
			return gapPass
		}
		return gapBox
	}
	for _, col := range cols {
		y := 0
		for k, i := range col {
			if k > 0 {
				y += gap(col[k-1], i)
			}
			g.boxes[i].y = y
			y += g.boxes[i].h
		}
	}
	mid := func(i int) int { return g.boxes[i].y + g.boxes[i].h/2 }
	for pass := range settle {
		for step := range cols {
			l := step
			if pass%2 == 1 {
				l = len(cols) - 1 - step
			}
			col := cols[l]
			want := make([]int, len(col))
			for k, i := range col {
				b := g.boxes[i]
				nb := append(slices.Clone(b.left), b.right...)
				if len(nb) == 0 {
					want[k] = b.y
					continue
				}
				sum := 0
				for _, o := range nb {
					sum += mid(o)
				}
				want[k] = floorDiv(sum, len(nb)) - b.h/2
			}
			// The tops closest to where each box wants to be that keep
			// the column's order and gaps: with offset the room the boxes
			// above need, top - offset must not decrease down the column,
			// which is an isotonic regression (pool adjacent violators).
			offset := make([]int, len(col))
			for k := 1; k < len(col); k++ {
				offset[k] = offset[k-1] + g.boxes[col[k-1]].h + gap(col[k-1], col[k])
			}
			type block struct{ sum, n int }
			var blocks []block
			for k := range col {
				blocks = append(blocks, block{want[k] - offset[k], 1})
				for len(blocks) > 1 {
					a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
					if a.sum*b.n <= b.sum*a.n { // in order: means do not decrease
						break
					}
					blocks = append(blocks[:len(blocks)-2], block{a.sum + b.sum, a.n + b.n})
				}
			}
			k := 0
			for _, bl := range blocks {
				z := floorDiv(bl.sum, bl.n)
				for range bl.n {
					g.boxes[col[k]].y = z + offset[k]
					k++
				}
			}
		}
	}
	if len(g.boxes) == 0 {
		return // an empty graph (a failure before anything was chosen) is a valid one
	}
	top := g.boxes[0].y
	for i := range g.boxes {
		top = min(top, g.boxes[i].y)
	}
	for i := range g.boxes {
		g.boxes[i].y += margin + headerH - top
	}
}

// floorDiv is a/b rounded down (b > 0), so negative tops round the same
// way as positive ones.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// forward routes a chain left to right: out of the source's right side,
// straight through each pass-through, into the target's left side, with
// a curve in each gap between columns. Its label goes by the target.
func (g *drawing) forward(ids []int, inPorts, outPorts map[[2]int]int) drawn {
	src, dst := g.boxes[ids[0]], g.boxes[ids[len(ids)-1]]
	var d strings.Builder
	x, y := src.x+src.w, outPorts[[2]int{ids[0], ids[1]}]
	fmt.Fprintf(&d, "M%d %d", x, y)
	for k := 1; k < len(ids); k++ {
		b := g.boxes[ids[k]]
		ty := b.y + b.h/2
		if k == len(ids)-1 {
			ty = inPorts[[2]int{ids[k-1], ids[k]}]
		}
		half := (b.x - x) / 2
		fmt.Fprintf(&d, " C%d %d %d %d %d %d", x+half, y, b.x-half, ty, b.x, ty)
		x, y = b.x, ty
		if b.pass {
			x = b.x + b.w
			fmt.Fprintf(&d, " L%d %d", x, y)
		}
	}
	return drawn{d: d.String(), labelX: dst.x - 6, labelY: y - 4}
}

// backward routes an edge whose target is not in a later column (a
// cycle's closing edge): from the bottom of the source, dipping below
// both boxes, into the bottom of the target; a package's edge to itself
// loops on its right side.
func (g *drawing) backward(from, to int) drawn {
	s, t := g.boxes[from], g.boxes[to]
	if from == to {
		x, y := s.x+s.w, s.y
		return drawn{d: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x, y+s.h/3, x+40, y-10, x+40, y+s.h+10, x, y+2*s.h/3), labelX: x + 44, labelY: y + s.h/2 + 4, back: true}
	}
	sx, sy := s.x+s.w/2, s.y+s.h
	tx, ty := t.x+t.w/2, t.y+t.h
	dip := max(sy, ty) + backDepth*(1+abs(s.layer-t.layer))
	return drawn{d: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", sx, sy, sx, dip, tx, dip, tx, ty), labelX: (sx + tx) / 2, labelY: dip - 4, back: true}
}

func clone2(cols [][]int) [][]int {
	out := make([][]int, len(cols))
	for i, c := range cols {
		out[i] = slices.Clone(c)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
