#!/usr/bin/env bash
# Copies an image from podman's store into the one-node cluster's containerd (harness/node/cluster.sh),
# where its kubelet finds it: the node has no registry to pull from.
#   NODE_DIR=... harness/node/load-image.sh IMAGE
# A name without a registry (capo-apiserver:tilt-123, as Tilt names its builds) is the one podman
# stored as localhost/..., and the one a pod's image field resolves to docker.io/library/...: the
# image is tagged under that name too.
set -euo pipefail
D=${NODE_DIR:-/tmp/capo-node}; BINS=${BINS:-${XDG_CACHE_HOME:-$HOME/.cache}/capo-k8s/bins}
image=$1
ctr=("$BINS/ctr" --address "$D/containerd/containerd.sock" -n k8s.io)
podman save --format docker-archive "$image" | "${ctr[@]}" images import - >/dev/null
first=${image%%/*}
if [ "$first" = "$image" ] || { [[ $first != *.* ]] && [[ $first != *:* ]] && [ "$first" != localhost ]; }; then
  # No registry in the name: podman stored it under localhost/, a pod asks for docker.io/library/.
  case $image in */*) path=$image ;; *) path=library/$image ;; esac
  "${ctr[@]}" images tag --force "localhost/$image" "docker.io/$path" >/dev/null
fi
