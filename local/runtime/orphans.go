package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// ReplicaMarker is set in every replica's environment to the state
// directory's instance ID. Replicas run in their own process group and die
// with knit dev (a parent-death signal), but a program they started — the
// app behind `sh -c 'app; echo'`, as `npm start` runs it — has no such
// signal, and when knit dev is killed (kill -9, a crash, the laptop's OOM
// killer) it lives on with init as its parent. The variable is inherited
// by everything a replica starts, so the next knit dev on the same state
// directory finds those orphans and kills them before it starts anything:
// nothing is leaked, and nothing of another knit dev (another state
// directory) or of the user's is touched.
const ReplicaMarker = "KNIT_DEV_REPLICA_OF"

// instanceID names a state directory in ReplicaMarker.
func instanceID(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:8])
}
