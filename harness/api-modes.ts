/**
 * The server in each of its two modes behind one surface, for tests that must hold in both: the
 * embedded default (its own kinds, its own Cluster API stand-ins) and the aggregated mode behind a
 * real kube-apiserver (requests go through kube-apiserver, Cluster API's kinds are CRDs there).
 * Both run the reconciler against a simulated cloud.
 */
import { aggregatedKinds, servedKinds } from '../src/served-kinds.js';
import type { RunningApp } from '../src/app.js';
import { startAggregatedServer } from './aggregated-server.js';
import { controlPlaneUnavailable, kubectlProxy, startControlPlane } from './control-plane.js';
import { request, startTestServer, type KubectlResult } from './test-server.js';

export type ApiModeName = 'embedded' | 'aggregated';

export interface ApiAnswer {
  status: number;
  body: any;
}

export interface ApiMode {
  name: ApiModeName;
  /** The server's process, in this one: its metrics, its reconciler. */
  app: RunningApp;
  /** A request as the cluster's admin, through kube-apiserver in the aggregated mode; `body` is sent as JSON unless `contentType` says otherwise. */
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<ApiAnswer>;
  /** The real kubectl as the cluster's admin, against kube-apiserver in the aggregated mode. */
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  stop(): Promise<void>;
}

/** Why a mode cannot run here, or undefined. */
export function apiModeUnavailable(name: ApiModeName): string | undefined {
  return name === 'aggregated' ? controlPlaneUnavailable() : undefined;
}

const cloud = { port: 0, transitionDelayMs: 20 };

export async function startApiMode(name: ApiModeName): Promise<ApiMode> {
  return name === 'embedded' ? startEmbedded() : startAggregated();
}

async function startEmbedded(): Promise<ApiMode> {
  const server = await startTestServer({ kinds: servedKinds, simulatedCloud: cloud, reconciler: {} });
  return {
    name: 'embedded',
    app: server,
    async call(method, path, body, contentType = 'application/json') {
      const answer = await request(server, method, path, {
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': contentType } }),
      });
      return { status: answer.status, body: answer.body === '' ? undefined : JSON.parse(answer.body) };
    },
    kubectl: (args, input) => server.kubectl(args, input === undefined ? {} : { input }),
    stop: () => server.stop(),
  };
}

async function startAggregated(): Promise<ApiMode> {
  const plane = await startControlPlane({ crds: ['capi'] });
  const server = await startAggregatedServer(plane, { simulatedCloud: cloud, reconciler: {}, kinds: aggregatedKinds });
  const proxy = await kubectlProxy(plane.kubeconfig);
  return {
    name: 'aggregated',
    app: server.app,
    async call(method, path, body, contentType = 'application/json') {
      const answer = await fetch(`${proxy.url}${path}`, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': contentType } }),
      });
      const text = await answer.text();
      return { status: answer.status, body: text === '' ? undefined : JSON.parse(text) };
    },
    kubectl: (args, input) => plane.kubectl(args, input),
    async stop() {
      proxy.stop();
      await server.close();
      await plane.stop();
    },
  };
}
