package forge

import (
	"container/list"
	"sync"
)

// deliveryState is what the dedupe window knows of a delivery id.
type deliveryState int

const (
	deliveryNew     deliveryState = iota // never seen: the caller now owns it
	deliveryPending                      // being handled by another request
	deliveryDone                         // handled successfully
)

// deliveries remembers the most recent delivery ids, least recently seen
// evicted first, so a forge's redelivery of a handled webhook is ignored.
type deliveries struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *delivery, most recent at the front
	byKey map[string]*list.Element
}

type delivery struct {
	key  string
	done bool
}

func newDeliveries(size int) *deliveries {
	return &deliveries{size: size, order: list.New(), byKey: make(map[string]*list.Element, size)}
}

// reserve records key as pending unless it is already known, and says
// what was known before.
func (d *deliveries) reserve(key string) deliveryState {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byKey[key]; ok {
		d.order.MoveToFront(el)
		if el.Value.(*delivery).done {
			return deliveryDone
		}
		return deliveryPending
	}
	d.byKey[key] = d.order.PushFront(&delivery{key: key})
	for d.order.Len() > d.size {
		oldest := d.order.Back()
		d.order.Remove(oldest)
		delete(d.byKey, oldest.Value.(*delivery).key)
	}
	return deliveryNew
}

// finish settles a reserved key: handled ids are remembered, failed ones
// forgotten so that the forge's redelivery is handled again.
func (d *deliveries) finish(key string, handled bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.byKey[key]
	if !ok {
		return // evicted while pending
	}
	if handled {
		el.Value.(*delivery).done = true
		return
	}
	d.order.Remove(el)
	delete(d.byKey, key)
}
