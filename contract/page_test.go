package contract

import "testing"

// A page is the same page as another when only the time each states
// differs; anything else that differs, or a page whose stated time cannot
// be found once, is another page.
func TestSamePageAsidesOnlyTheStatedTime(t *testing.T) {
	page := func(body, at string) string {
		return "<header><dd>" + StatedTime + at + `">` + at + " UTC</time></dd></header>" + body
	}
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"the same bytes", page("<p>x</p>", "2026-05-01T12:30:45Z"), page("<p>x</p>", "2026-05-01T12:30:45Z"), true},
		{"another time alone", page("<p>x</p>", "2026-05-01T12:30:45Z"), page("<p>x</p>", "2026-05-01T13:30:45Z"), true},
		{"another time and another body", page("<p>x</p>", "2026-05-01T12:30:45Z"), page("<p>y</p>", "2026-05-01T13:30:45Z"), false},
		{"the same time and another body", page("<p>x</p>", "2026-05-01T12:30:45Z"), page("<p>y</p>", "2026-05-01T12:30:45Z"), false},
		{"an old page with no stated time", `<dd><time datetime="2026-05-01T12:30:45Z">2026-05-01 12:30:45 UTC</time></dd><p>x</p>`, page("<p>x</p>", "2026-05-01T13:30:45Z"), false},
		{"a page stating two times", page(StatedTime+`1">1</time>`, "2"), page(StatedTime+`1">1</time>`, "3"), false},
		{"a stated time never closed", "<p>" + StatedTime + "1", "<p>" + StatedTime + "2", false},
		{"a time taken out leaves what follows", page("<p>x</p>", "1") + "</time>", page("<p>x</p>", "2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SamePage([]byte(tt.a), []byte(tt.b)); got != tt.same {
				t.Errorf("SamePage(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.same)
			}
			if got := SamePage([]byte(tt.b), []byte(tt.a)); got != tt.same {
				t.Errorf("SamePage the other way round = %v; want %v", got, tt.same)
			}
		})
	}
}
