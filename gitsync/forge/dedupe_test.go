package forge

import "testing"

func TestDeliveriesWindow(t *testing.T) {
	d := newDeliveries(2)
	if got := d.reserve("a"); got != deliveryNew {
		t.Fatalf("reserve a = %v, want new", got)
	}
	if got := d.reserve("a"); got != deliveryPending {
		t.Fatalf("reserve a while pending = %v, want pending", got)
	}
	d.finish("a", true)
	if got := d.reserve("a"); got != deliveryDone {
		t.Fatalf("reserve a after success = %v, want done", got)
	}

	d.reserve("b")
	d.finish("b", false)
	if got := d.reserve("b"); got != deliveryNew {
		t.Fatalf("reserve b after failure = %v, want new (forgotten)", got)
	}
	d.finish("b", true)

	// a was touched before b, so c evicts a.
	d.reserve("c")
	d.finish("c", true)
	if got := d.reserve("b"); got != deliveryDone {
		t.Errorf("b = %v, want done (still in window)", got)
	}
	if got := d.reserve("a"); got != deliveryNew {
		t.Errorf("a = %v, want new (evicted)", got)
	}
	if d.order.Len() != 2 || len(d.byKey) != 2 {
		t.Errorf("window holds %d/%d ids, want 2", d.order.Len(), len(d.byKey))
	}
	d.finish("evicted-long-ago", true) // no panic, no growth
	if d.order.Len() != 2 {
		t.Errorf("finishing an unknown id grew the window to %d", d.order.Len())
	}
}
