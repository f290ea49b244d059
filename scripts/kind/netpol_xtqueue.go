// Added to sigs.k8s.io/kube-network-policies' networkpolicy package at build time
// (scripts/kind.sh, go build -overlay): its rules hand packets to user space with nftables'
// own queue expression, which needs a kernel built with CONFIG_NFT_QUEUE. A kernel without
// it (this project's test machine) still has xtables' NFQUEUE target, reached from
// nftables through nft_compat: the same verdict, the same queue, another expression.

package networkpolicy

import (
	"encoding/binary"

	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
)

// xtQueue is NFQUEUE revision 3 (struct xt_NFQ_info_v3: queuenum, queues_total, flags, in
// host order, padded to 8 bytes as xtables aligns a target's info); flag 1 is
// NFQ_FLAG_BYPASS: with no listener on the queue the packet is accepted, not dropped.
func xtQueue(num uint16, bypass bool) *expr.Target {
	info := make([]byte, 8)
	binary.NativeEndian.PutUint16(info[0:], num)
	binary.NativeEndian.PutUint16(info[2:], 1)
	if bypass {
		binary.NativeEndian.PutUint16(info[4:], 1)
	}
	x := xt.Unknown(info)
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &x}
}
