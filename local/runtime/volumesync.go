package runtime

import (
	"context"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/volumes"
)

// syncVolumes keeps the replica's volumes of API data current until ctx
// ends, as the kubelet does: every VolumeSyncPeriod each one is read again
// and, when its files changed (a ConfigMap or Secret edited, a token due),
// swapped in whole. A mount by subPath keeps the file it bound, as on
// Kubernetes. A read that fails (the ConfigMap deleted) keeps what is on
// disk, and is logged.
func (r *replica) syncVolumes(ctx context.Context) {
	if !r.hasAPIData() {
		return
	}
	tick := time.NewTicker(r.rt.opts.VolumeSyncPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.refreshVolumes(ctx)
		}
	}
}

func (r *replica) hasAPIData() bool {
	return slices.ContainsFunc(r.spec.Volumes, func(v corev1.Volume) bool { return volumes.APIData(&v) })
}

// refreshVolumes is one pass of syncVolumes, once the volumes are written.
func (r *replica) refreshVolumes(ctx context.Context) {
	r.volumes.mu.Lock()
	defer r.volumes.mu.Unlock()
	if !r.volumes.prepared {
		return
	}
	src := r.volumeSources()
	for i := range r.spec.Volumes {
		v := &r.spec.Volumes[i]
		if !volumes.APIData(v) {
			continue
		}
		files, err := volumes.PayloadOf(ctx, src, downward(r.pod), r.spec, v)
		if err == nil && !files.Equal(r.volumes.written[v.Name]) {
			dir := filepath.Join(r.volumesDir(), v.Name)
			if err = volumes.WriteAtomic(dir, files); err == nil {
				err = r.ownVolume(v, dir)
			}
			if err == nil {
				r.volumes.written[v.Name] = files
				r.log.V(1).Info("Volume updated", "volume", v.Name, "files", len(files))
			}
		}
		r.noteRefresh(v.Name, err)
	}
}

// noteRefresh logs a volume's refresh error when it is new, and its
// recovery, so a deleted ConfigMap is one log line, not one a period.
func (r *replica) noteRefresh(volume string, err error) {
	if r.volumes.failing == nil {
		r.volumes.failing = map[string]string{}
	}
	was := r.volumes.failing[volume]
	switch {
	case err != nil && err.Error() != was:
		r.volumes.failing[volume] = err.Error()
		r.log.Info("Volume not updated; the replica keeps its last files", "volume", volume, "error", err.Error())
	case err == nil && was != "":
		delete(r.volumes.failing, volume)
		r.log.Info("Volume updated again", "volume", volume)
	}
}
