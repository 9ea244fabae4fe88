#!/usr/bin/env bash
# A real one-node Kubernetes cluster on this machine, for running deploy/ as pods: etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, containerd 2 (runc), kubelet and kube-proxy
# (binaries from ../shared/k8s/build.sh k8s etcd node; runc, iptables and the CNI plugins from Debian).
#
#   harness/node/cluster.sh start   fresh state in $NODE_DIR, every component up, the node Ready
#   harness/node/cluster.sh stop    stops what start started (by recorded PIDs), removes pods' mounts,
#                                   the bridge and kube-proxy's rules
#   . $NODE_DIR/env                 KUBECONFIG (admin), NODE_IP, ETCD_URL, CONTAINERD_ADDRESS, K8S_CA, ...
#
# Pods live on the bridge capo-br0 (10.244.0.0/24); the host is 10.244.0.1 on it, which is the node's
# address, where kube-apiserver and etcd are reached from pods. Nothing is forwarded or masqueraded:
# pods reach the host and each other, and no packet of theirs leaves the machine.
#
# What these machines need, found by trying (cgroup v1, no CAP_SYS_RESOURCE, no image registry):
#   - kubelet: cgroupDriver cgroupfs (containerd's runc the same, SystemdCgroup=false), failCgroupV1
#     false (cgroup v1 is in maintenance since 1.31), swap and kernel-default checks off.
#   - containerd: restrict_oom_score_adj, since lowering a process's OOM score needs CAP_SYS_RESOURCE
#     (without it runc fails every sandbox with "can't get final child's PID from pipe: EOF" as it
#     writes the pause container's -998); its own root, state and socket under $NODE_DIR; the sandbox (pause) image made
#     locally from Debian's static catatonit in its pause mode (-P), since registry.k8s.io/pause
#     cannot be pulled; runc from Debian.
#   - kube-proxy: iptables mode with conntrack sizing left alone (maxPerCore 0).
# Env: NODE_DIR (/tmp/capo-node), BINS (~/.cache/capo-k8s/bins), ETCD_PORT (23890), APISERVER_PORT (17443).
set -euo pipefail
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/capo-k8s
D=${NODE_DIR:-/tmp/capo-node}; BINS=${BINS:-$CACHE/bins}; P=$D/pki
EP=${ETCD_PORT:-23890}; AP=${APISERVER_PORT:-17443}
NODE=capo-node; BRIDGE=capo-br0; NODE_IP=10.244.0.1; POD_CIDR=10.244.0.0/24; SERVICE_CIDR=10.96.0.0/24
PAUSE_IMAGE=localhost/capo-pause:catatonit
export PATH=$BINS:$PATH
k() { kubectl --kubeconfig "$D/admin.kubeconfig" "$@"; }

cert() { # NAME SUBJECT EXTENSIONS [CA]: key + cert signed by CA (default: the cluster CA)
  local ca=${4:-ca}
  openssl req -new -newkey rsa:2048 -nodes -keyout "$P/$1.key" -subj "$2" -out "$P/$1.csr" 2>/dev/null
  openssl x509 -req -in "$P/$1.csr" -CA "$P/$ca.crt" -CAkey "$P/$ca.key" -CAcreateserial -days 3650 \
    -extfile <(printf "keyUsage=critical,digitalSignature,keyEncipherment\n%s\n" "$3") -out "$P/$1.crt" 2>/dev/null
}
kubeconfig() { # USER: a kubeconfig with that user's client certificate
  cat >"$D/$1.kubeconfig" <<EOC
apiVersion: v1
kind: Config
clusters: [{name: node, cluster: {server: "https://127.0.0.1:$AP", certificate-authority: "$P/ca.crt"}}]
users: [{name: $1, user: {client-certificate: "$P/$1.crt", client-key: "$P/$1.key"}}]
contexts: [{name: node, context: {cluster: node, user: $1}}]
current-context: node
EOC
}
pki() {
  mkdir -p "$P"
  for ca in ca front-proxy-ca; do openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -keyout "$P/$ca.key" \
    -out "$P/$ca.crt" -subj "/CN=capo-node-$ca" -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null; done
  cert apiserver /CN=kube-apiserver "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$NODE_IP,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" extendedKeyUsage=clientAuth
  cert admin "/O=system:masters/CN=admin" extendedKeyUsage=clientAuth
  cert kcm /CN=system:kube-controller-manager extendedKeyUsage=clientAuth
  cert scheduler /CN=system:kube-scheduler extendedKeyUsage=clientAuth
  cert kubelet "/O=system:nodes/CN=system:node:$NODE" extendedKeyUsage=clientAuth
  cert kube-proxy /CN=system:kube-proxy extendedKeyUsage=clientAuth
  cert front-proxy-client /CN=front-proxy-client extendedKeyUsage=clientAuth front-proxy-ca
  openssl genrsa -out "$P/sa.key" 2048 2>/dev/null && openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
  for u in admin kcm scheduler kubelet kube-proxy; do kubeconfig "$u"; done
  cat >"$D/env" <<EOC
export NODE_DIR=$D KUBECONFIG=$D/admin.kubeconfig APISERVER=https://127.0.0.1:$AP NODE_IP=$NODE_IP NODE_NAME=$NODE
export ETCD_URL=http://$NODE_IP:$EP CONTAINERD_ADDRESS=$D/containerd/containerd.sock PAUSE_IMAGE=$PAUSE_IMAGE
export K8S_CA=$P/ca.crt K8S_CA_KEY=$P/ca.key FRONT_PROXY_CA=$P/front-proxy-ca.crt
EOC
}

run() { # NAME BINARY ARGS...: start detached, PID in $D/NAME.pid, log in $D/NAME.log
  local n=$1; shift; rm -f "$D/$n.pid"
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$D/$n.pid" "$@" >"$D/$n.log" 2>&1 </dev/null &
  for _ in $(seq 50); do [ -s "$D/$n.pid" ] && return 0; sleep 0.1; done
}
alive() { [ -s "$D/$1.pid" ] && kill -0 "$(cat "$D/$1.pid")" 2>/dev/null; }
wait_for() { # SECONDS NAME CMD...: poll CMD each second; on time-out show NAME's log, stop everything, fail
  local t=$1 n=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    ((t--)) || { echo "timed out waiting for $n; $D/$n.log:" >&2; tail -20 "$D/$n.log" >&2; stop >&2; exit 1; }; sleep 1
  done
}

network() { # the pods' bridge with the node's address; bridged traffic through iptables, for Services
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$NODE_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  mkdir -p "$D/cni"
  cat >"$D/cni/10-capo-pods.conflist" <<EOC
{"cniVersion": "1.0.0", "name": "capo-pods", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$D/cni-ipam", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOC
}

containerd_up() {
  mkdir -p "$D/containerd"
  cat >"$D/containerd/config.toml" <<EOC
version = 3
root = "$D/containerd/root"
state = "$D/containerd/state"
[grpc]
  address = "$D/containerd/containerd.sock"
[plugins.'io.containerd.cri.v1.images'.pinned_images]
  sandbox = "$PAUSE_IMAGE"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
[plugins.'io.containerd.cri.v1.runtime'.cni]
  bin_dirs = ["/usr/lib/cni"]
  conf_dir = "$D/cni"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
  BinaryName = "/usr/sbin/runc"
  SystemdCgroup = false
EOC
  run containerd "$BINS/containerd" --config "$D/containerd/config.toml"
  wait_for 30 containerd ctr --address "$D/containerd/containerd.sock" version
  # The sandbox image: catatonit -P sleeps until signalled and reaps what it must, as pause does.
  if ! ctr --address "$D/containerd/containerd.sock" -n k8s.io images check "name==$PAUSE_IMAGE" | grep -q complete; then
    local context; context=$(mktemp -d)
    cp /usr/bin/catatonit "$context/catatonit"
    printf 'FROM scratch\nCOPY catatonit /catatonit\nENTRYPOINT ["/catatonit", "-P"]\n' >"$context/Containerfile"
    podman build -q -t "$PAUSE_IMAGE" "$context" >/dev/null
    NODE_DIR=$D BINS=$BINS "$(dirname "$0")/load-image.sh" "$PAUSE_IMAGE"
    rm -rf "$context"
  fi
}

start() {
  alive kube-apiserver && { echo "already running (NODE_DIR=$D); stop first" >&2; return 1; }
  for tool in "$BINS/kubelet" "$BINS/containerd" "$BINS/kube-apiserver" /usr/sbin/runc /usr/lib/cni/bridge /usr/bin/catatonit; do
    [ -x "$tool" ] || { echo "missing $tool (../shared/k8s/build.sh k8s etcd node; apt-get install runc iptables containernetworking-plugins catatonit)" >&2; return 1; }
  done
  rm -rf "$D"; mkdir -p "$D"; pki; network
  run etcd "$BINS/etcd" --name capo-node --data-dir "$D/etcd" \
    --listen-client-urls "http://127.0.0.1:$EP,http://$NODE_IP:$EP" --advertise-client-urls "http://$NODE_IP:$EP" \
    --listen-peer-urls "http://127.0.0.1:$((EP + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((EP + 1))" \
    --initial-cluster "capo-node=http://127.0.0.1:$((EP + 1))"
  wait_for 30 etcd curl -sf "http://127.0.0.1:$EP/health"
  run kube-apiserver "$BINS/kube-apiserver" --etcd-servers "http://127.0.0.1:$EP" \
    --bind-address 0.0.0.0 --advertise-address "$NODE_IP" --secure-port "$AP" \
    --tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" --client-ca-file "$P/ca.crt" \
    --kubelet-client-certificate "$P/apiserver-kubelet-client.crt" --kubelet-client-key "$P/apiserver-kubelet-client.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
    --requestheader-client-ca-file "$P/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$P/front-proxy-client.crt" --proxy-client-key-file "$P/front-proxy-client.key" \
    --enable-aggregator-routing=true --kubelet-preferred-address-types InternalIP
  wait_for 90 kube-apiserver k get --raw /readyz
  run kube-controller-manager "$BINS/kube-controller-manager" --kubeconfig "$D/kcm.kubeconfig" \
    --authentication-kubeconfig "$D/kcm.kubeconfig" --authorization-kubeconfig "$D/kcm.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port $((AP + 1)) --leader-elect=false \
    --use-service-account-credentials --service-account-private-key-file "$P/sa.key" --root-ca-file "$P/ca.crt" \
    --cluster-signing-cert-file "$P/ca.crt" --cluster-signing-key-file "$P/ca.key"
  run kube-scheduler "$BINS/kube-scheduler" --kubeconfig "$D/scheduler.kubeconfig" \
    --authentication-kubeconfig "$D/scheduler.kubeconfig" --authorization-kubeconfig "$D/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port $((AP + 2)) --leader-elect=false
  containerd_up
  cat >"$D/kubelet.yaml" <<EOC
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
healthzBindAddress: 127.0.0.1
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: "$P/ca.crt"}}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: false
containerRuntimeEndpoint: unix://$D/containerd/containerd.sock
podCIDR: $POD_CIDR
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
EOC
  run kubelet "$BINS/kubelet" --config "$D/kubelet.yaml" --kubeconfig "$D/kubelet.kubeconfig" \
    --root-dir "$D/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP" --cert-dir "$D/kubelet-pki"
  cat >"$D/kube-proxy.yaml" <<EOC
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$D/kube-proxy.kubeconfig"}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:$((AP + 3))
metricsBindAddress: 127.0.0.1:$((AP + 4))
conntrack: {maxPerCore: 0}
EOC
  run kube-proxy "$BINS/kube-proxy" --config "$D/kube-proxy.yaml"
  wait_for 120 kubelet k wait --for=condition=Ready "node/$NODE" --timeout=1s
  echo "node $NODE Ready: kube-apiserver https://127.0.0.1:$AP (pods reach it at $NODE_IP); . $D/env; stop: $0 stop"
}

stop() { # TERM, then KILL after 20 s; only the PIDs recorded by start; then what the pods left behind
  local n pid
  for n in kube-proxy kubelet containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do
    alive "$n" || { rm -f "$D/$n.pid"; continue; }; pid=$(cat "$D/$n.pid"); kill "$pid"
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"; rm -f "$D/$n.pid"; echo "stopped $n ($pid)"
  done
  # The shims and their containers outlive containerd by design.
  pkill -9 -f "containerd-shim-runc-v2 -namespace k8s.io -id .* -address $D/containerd" 2>/dev/null || true
  grep " $D/" /proc/mounts | awk '{print $2}' | sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  ip link del "$BRIDGE" 2>/dev/null || true
  iptables-save | grep -q KUBE- && kube-proxy --cleanup >/dev/null 2>&1 || true
}

case ${1:-} in
  start) start ;; stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
