package document

// BarrierCheck is one condition of a barrier and what was last seen of
// it.
type BarrierCheck struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// State is the last observed state, in words.
	State string `json:"state"`
	// Waited is how long the check took to hold (or was waited for).
	Waited string `json:"waited"`
}

// BarrierResult is the outcome of a wait.
type BarrierResult struct {
	Ready  bool           `json:"ready"`
	Checks []BarrierCheck `json:"checks"`
}

// Barrier is a barrier's document, as the daemon answers: the outcome
// of the wait and, when the barrier did not hold, Failed and why (Msg).
type Barrier struct {
	BarrierResult
	Failed bool   `json:"failed,omitempty"`
	Msg    string `json:"msg,omitempty"`
}
