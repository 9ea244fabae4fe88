/**
 * What the dashboard's API answers about clusters, shared by the server
 * (cluster-view.ts, routes.ts) and the page (web/dashboard), which imports
 * these types only. It imports nothing, so the browser build can read it.
 */
export interface ConditionView {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** One node of the tree: a Kubernetes object or an OpenStack resource it recorded. */
export interface TreeNode {
  kind: string;
  name: string;
  /** The OpenStack ID, for cloud resources and servers. */
  id?: string;
  /** What the cloud says (ACTIVE, BUILD, ERROR) or the Ready condition's status. */
  state?: string;
  ready?: boolean;
  reason?: string;
  message?: string;
  children: TreeNode[];
}

export interface Blocker {
  /** `Kind name` of the object that says so. */
  object: string;
  reason: string;
  message: string;
  /** What the user can do about it. */
  advice: string;
}

export interface ClusterSummary {
  namespace: string;
  name: string;
  /** Cluster API's phase, when this server stores the Cluster (embedded mode). */
  phase?: string;
  paused: boolean;
  ready: boolean;
  machinesReady: number;
  machines: number;
  apiEndpoint?: string;
  missingVariables: string[];
  /** The blocking thing, when not Ready. */
  lastError?: Blocker;
  /**
   * The resources (`resource.group`) the caller may not list in the namespace, whose objects the
   * page leaves out: machine counts, readiness and blockers then speak of what is shown only.
   */
  hidden?: string[];
}

export interface ClusterDetail {
  summary: ClusterSummary;
  tree: TreeNode;
  blockers: Blocker[];
  /** Each object's creation-to-Ready span, earliest first: the longest bars are the critical path. */
  timeline: TimelineSpan[];
  /** The Events about the cluster's objects, oldest first: what the timeline marks and lists. */
  events?: EventView[];
  /** Of those, the ones telling of drift: a resource deleted behind the reconciler's back, and what it did about it. */
  drift?: EventView[];
  /** Where the timeline's axis ends: the last thing that happened to the cluster's objects (a creation or a condition's change), so bars keep their length as time passes. */
  timelineEndsAt?: string;
  /** The ClusterExtension: the bootstrap variables, and the missing ones with why. */
  variables?: { status?: { vars?: Record<string, unknown>; missing?: MissingVariable[] } };
}

/** An Event about one of the cluster's objects, as the timeline shows it. */
export interface EventView {
  /** `Kind name` of the object, as the timeline's rows name them. */
  object: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  firstAt: string;
  lastAt: string;
}

/** An ORC Image a cluster's machines or bastion boot from (image.imageRef), as the dashboard shows it. */
export interface ImageView {
  name: string;
  /** Its Glance ID, once ORC (or this server) created or found it. */
  id?: string;
  /** Available, or what keeps it from being available (the Available condition's reason), or NotFound. */
  state: string;
  ready: boolean;
  message?: string;
}

/** Cluster API's Cluster as the dashboard shows it, read from wherever Cluster API objects live. */
export interface ClusterApiView {
  name: string;
  paused: boolean;
  /** status.phase, set by Cluster API's controllers (none run in the embedded mode). */
  phase?: string;
}

/** One object's span from creation to Ready, for the provisioning timeline. */
export interface TimelineSpan {
  /** `Kind name`. */
  object: string;
  createdAt: string;
  /** When its Ready (or InstanceReady) condition last turned True; absent while it is not Ready. */
  readyAt?: string;
}

export interface MissingVariable {
  variable: string;
  path: string;
  reason: string;
  message: string;
}

/** A cluster's page: its detail and the actions the caller may take. */
export interface ClusterPageData extends ClusterDetail {
  actions: { reconcile: boolean; pause: boolean; preflight: boolean };
}
