package runpodsim

// StockChange takes every free GPU of one type in one data center (and
// cloud) away, as other customers renting them would, right after a request
// it hits has been answered: an offer read from the catalog is then stale by
// the time a pod is created from it. Only the free GPUs go; pods already on
// the machines keep theirs, and GPUs they release later are free again.
type StockChange struct {
	Match
	When         Trigger
	DataCenterID string
	GPUTypeID    string
	Cloud        string // Secure or Community; "" means both
}

// TakeStock makes the free GPUs of gpuID in dataCenterID (cloud "" for
// both) unavailable at once and returns how many were taken.
func (s *Server) TakeStock(dataCenterID, gpuID, cloud string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeStock(dataCenterID, gpuID, cloud)
}

func (s *Server) takeStock(dataCenterID, gpuID, cloud string) int {
	taken := 0
	for _, h := range s.market.hosts {
		p := h.profile
		if p.DataCenterID == dataCenterID && p.GPUTypeID == gpuID && (cloud == "" || p.Cloud == cloud) {
			taken += h.free
			h.free = 0
		}
	}
	return taken
}

// changeStock applies the StockChanges that hit route; s.mu is held.
func (s *Server) changeStock(route string) {
	for i, sc := range s.cfg.faults.StockChanges {
		if s.hit(sc.Match, sc.When, stream(streamStockChange, i), route) {
			s.takeStock(sc.DataCenterID, sc.GPUTypeID, sc.Cloud)
		}
	}
}

// streamStockChange follows the fault streams of faults.go.
const streamStockChange = streamRewrite + 1
