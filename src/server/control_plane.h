// ControlPlane: the state of the cloud and every change to it.
//
// It holds users, credentials, templates, pods and nodes in memory, checks who may do what, and
// turns each accepted change into a store::Batch that it submits to the CommitQueue in the same
// critical section, so the order of the writes on disk is the order of the changes in memory. A
// caller acknowledges a change to its client only once the queue says the returned sequence is
// durable (Written<T>::sequence); reads wait for the same, so nobody sees a write that could still
// be lost.
//
// The scheduler and the meter run in Tick(), which the server calls every 250 ms and tests call
// after stepping a ManualClock. Time comes only from the injected Clock.
//
// Thread-safe: one mutex guards everything, the components under server/state included (each is
// thread-compatible and called with it held: one lock, because a create touches the caller's
// balance, the scheduler's view and a node's waiters at once, and several locks would make that an
// ordering problem; docs/architecture.md). No method blocks on I/O while holding it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "advisor/advisor.h"
#include "advisor/measured.h"
#include "advisor/workload.h"
#include "billing/accounting.h"
#include "billing/auto_stop.h"
#include "billing/spend.h"
#include "catalog/catalog.h"
#include "core/clock.h"
#include "core/domain.h"
#include "core/entropy.h"
#include "core/mutex.h"
#include "core/status.h"
#include "sched/scheduler.h"
#include "server/credentials.h"
#include "server/gauges.h"
#include "server/node_waiters.h"
#include "server/services/account_types.h"
#include "server/services/endpoint_types.h"
#include "server/services/event_types.h"
#include "server/services/pod_types.h"
#include "server/services/volume_types.h"
#include "server/services/written.h"
#include "server/state/access_policy.h"
#include "server/state/pod_registry.h"
#include "server/state/principal.h"
#include "server/state/serverless_registry.h"
#include "server/webhooks.h"
#include "serverless/endpoint.h"
#include "serverless/job.h"
#include "store/commit_queue.h"
#include "store/store.h"
#include "wire/agent_protocol.h"
#include "wire/relay_protocol.h"
#include "wire/views.h"

namespace suanli::server {

using core::Entropy;

struct ControlPlaneOptions {
  core::Duration unreachable_after = std::chrono::seconds(30);  // no heartbeat for this long
  // An unreachable node may be removed with pods on it (`nodes rm`: they are lost, billed to its
  // last heartbeat) once it has been silent this long; before, it must be drained.
  core::Duration lost_node_grace = std::chrono::minutes(10);
  core::Duration charge_every = std::chrono::seconds(60);    // ledger slice of a running pod
  core::Duration minimum_runway = std::chrono::minutes(10);  // to start a pod
  core::Money storage_per_gb_month = core::Money::FromMicros(100'000);  // $0.10
  core::Duration join_token_lifetime = std::chrono::hours(24);
  int long_poll_limit_s = 60;
  // Per-user quotas unless an admin sets others (SetQuota): pods not terminated, pods waiting for
  // a GPU (one user once queued ~8,800 pending pods in a minute), and serverless endpoints.
  int default_max_pods = 100;
  int default_max_pending_pods = 20;
  int default_max_endpoints = 50;
  // Per owner: the bytes of input of their queued and running serverless jobs, which are held in
  // memory; a job past it is refused (429) until some finish or the queue is purged.
  size_t max_waiting_job_bytes = size_t{64} << 20;
  // The server's base URL as a serverless worker's container reaches it (its job and result URLs).
  std::string worker_url = "http://host.containers.internal:7070";
  // Retention: events and audit entries older than these are deleted (checked hourly).
  core::Duration event_retention = std::chrono::hours(24 * 30);
  core::Duration audit_retention = std::chrono::hours(24 * 365);
  // A user whose balance lasts less than this at their spend rate gets one balance.low event.
  core::Duration low_balance_runway = std::chrono::hours(1);
  // A pod whose data's node is full waits for it as long as moving the data would take, at most
  // this long, then moves it (docs/architecture.md, "Move or wait"); 0: moves at once.
  core::Duration max_data_wait = std::chrono::minutes(10);
  // What a move is assumed to carry per second until moves of 100 MB or more have been measured.
  int64_t move_bytes_per_second = 50'000'000;
};

class ControlPlaneOnStoreTest;

class ControlPlane {
 public:
  // Loads the state from `store` (creating the admin on first start). The secret of a new admin
  // token is returned through `new_admin_token` (empty when an admin already existed).
  static core::Result<std::unique_ptr<ControlPlane>> Open(
      store::Store& store, store::CommitQueue& queue, catalog::Catalog catalog, core::Clock& clock,
      Entropy& entropy, ControlPlaneOptions options, std::string* new_admin_token);
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // --- Credentials. UNAUTHENTICATED for a missing, unknown or revoked secret.
  core::Result<Principal> Authenticate(std::string_view bearer) const;
  core::Result<Principal> AuthenticateNode(std::string_view bearer) const;

  // --- Users (admin), the caller's own account.
  core::Result<Written<core::User>> CreateUser(const Principal& caller, std::string name,
                                               core::Role role, core::Money credits);
  core::Result<Written<std::vector<core::User>>> ListUsers(const Principal& caller) const;
  core::Result<Written<core::User>> GetUser(const Principal& caller, std::string_view id) const;
  core::Result<Written<core::User>> AddCredits(const Principal& caller, std::string_view user_id,
                                               core::Money amount, std::string note);
  core::Result<Written<core::User>> SetSpendCap(const Principal& caller, core::Money per_hour);
  // The caller's monthly budget (0: none) and what happens when it is reached
  // (control_plane_events.cc). INVALID_ARGUMENT for a negative budget.
  core::Result<Written<core::User>> SetBudget(const Principal& caller, core::Money monthly,
                                              core::BudgetAction action);
  // Admin: a user's pod quotas. INVALID_ARGUMENT for a negative limit.
  core::Result<Written<core::User>> SetQuota(const Principal& caller, std::string_view user_id,
                                             QuotaChange change);
  // What the caller pays per hour now (running GPUs and every volume).
  core::Money SpendRate(std::string_view user_id) const;

  // --- API tokens and SSH keys of the caller. The token's secret is returned once.
  // `read_only`: the token may only read (GET and HEAD). A read-only caller cannot make tokens.
  // `project` (id or name, of a project the caller is in): the token reaches only its pods.
  core::Result<Written<std::pair<core::ApiToken, std::string>>> CreateToken(
      const Principal& caller, std::string name, std::string_view for_user = {},
      bool read_only = false, std::string_view project = {});
  core::Result<Written<std::vector<core::ApiToken>>> ListTokens(const Principal& caller) const;
  core::Result<Written<core::ApiToken>> RevokeToken(const Principal& caller, std::string_view id);
  core::Result<Written<core::SshKey>> AddSshKey(const Principal& caller, std::string name,
                                                std::string public_key);
  core::Result<Written<std::vector<core::SshKey>>> ListSshKeys(const Principal& caller) const;
  core::Result<Written<core::SshKey>> DeleteSshKey(const Principal& caller, std::string_view id);

  // --- Templates: built-ins, public ones, and the caller's own.
  core::Result<Written<core::Template>> CreateTemplate(const Principal& caller, TemplateSpec spec);
  core::Result<Written<std::vector<core::Template>>> ListTemplates(const Principal& caller) const;
  core::Result<Written<core::Template>> GetTemplate(const Principal& caller,
                                                    std::string_view id) const;
  core::Result<Written<core::Template>> DeleteTemplate(const Principal& caller,
                                                       std::string_view id);

  // --- Pods.
  core::Result<Written<core::Pod>> CreatePod(const Principal& caller, PodSpec spec);
  // Pods as shown: `cost` includes what has accrued since the last charge.
  core::Result<Written<std::vector<core::Pod>>> ListPods(const Principal& caller) const;
  // ListPods without copies, for a list that caches each pod's view (routes/pod_list.h): calls
  // `visit` for each pod of `page` the caller may see, under the control plane's lock (so `visit`
  // must not call the control plane).
  core::Result<PodPageEnd> VisitPods(const Principal& caller, const PodPage& page,
                                     const std::function<void(const PodListEntry&)>& visit) const;
  core::Result<Written<core::Pod>> GetPod(const Principal& caller, std::string_view id) const;
  // The pod and its node, for a relayed request. NOT_FOUND as GetPod. Its logs are for whoever
  // sees it; its ports (HTTP through the proxy: a notebook runs code) only for whoever may change
  // it: PERMISSION_DENIED for a viewer of its project.
  enum class Reach { kLogs, kPorts };
  core::Result<PodPlacement> Placement(const Principal& caller, std::string_view pod_id,
                                       Reach reach) const;
  // stop, start, restart; terminate refuses a volume with data unless `force`.
  core::Result<Written<core::Pod>> Act(const Principal& caller, std::string_view id,
                                       core::PodAction action, bool force = false);

  // --- Projects (control_plane_projects.cc): a team's pods, seen by its members as their roles
  // allow (core::ProjectRole), billed to its owner. A person sees the projects they are a member
  // of (by id or name), an admin all; one who is not a member gets NOT_FOUND, as for a pod.
  core::Result<Written<core::Project>> CreateProject(const Principal& caller,
                                                     std::string_view name);
  core::Result<Written<std::vector<core::Project>>> ListProjects(const Principal& caller) const;
  core::Result<Written<core::Project>> GetProject(const Principal& caller,
                                                  std::string_view id) const;
  std::string UserName(std::string_view user_id) const;  // "" for an unknown id
  // The owner (or an admin) makes `user` (id or name) a member or a viewer, or changes their
  // role; the owner's own role does not change (INVALID_ARGUMENT).
  core::Result<Written<core::Project>> SetProjectMember(const Principal& caller,
                                                        std::string_view id, std::string_view user,
                                                        core::ProjectRole role);
  core::Result<Written<core::Project>> RemoveProjectMember(const Principal& caller,
                                                           std::string_view id,
                                                           std::string_view user);
  // FAILED_PRECONDITION while a pod of the project is not terminated.
  core::Result<Written<core::Project>> DeleteProject(const Principal& caller, std::string_view id);
  // The project's own limits (its owner, or an admin): each given one set, 0 for none. A new
  // monthly budget or action starts the month over (warned at its 80 %, acted on at its 100 %).
  struct ProjectBudgetChange {
    std::optional<core::Money> spend_cap_per_hour;
    std::optional<core::Money> monthly_budget;
    std::optional<core::BudgetAction> action;
  };
  core::Result<Written<core::Project>> SetProjectBudget(const Principal& caller,
                                                        std::string_view id,
                                                        const ProjectBudgetChange& change);

  // --- Nodes (admin) and join tokens.
  core::Result<Written<std::pair<core::JoinToken, std::string>>> CreateJoinToken(
      const Principal& caller, std::string note);
  core::Result<Written<std::vector<core::JoinToken>>> ListJoinTokens(const Principal& caller) const;
  core::Result<Written<core::JoinToken>> DeleteJoinToken(const Principal& caller,
                                                         std::string_view id);
  core::Result<Written<std::vector<core::Node>>> ListNodes(const Principal& caller) const;
  core::Result<Written<core::Node>> GetNode(const Principal& caller, std::string_view id) const;
  // The owner of pod `pod_id` when `link` is its link token (for the proxy's routes only);
  // UNAUTHENTICATED otherwise.
  core::Result<Principal> AuthenticatePodLink(std::string_view pod_id, std::string_view link) const;
  // The catalog at this cloud's prices (an admin's overrides included), for the advisor.
  core::Result<Written<catalog::Catalog>> PricedCatalog(const Principal& caller) const;
  // Where renters reach the ports of pods on `node_id`; "" for an unknown node. For pod views.
  std::string NodeAddress(std::string_view node_id) const;
  enum class NodeAction { kCordon, kUncordon, kDrain };
  core::Result<Written<core::Node>> ActOnNode(const Principal& caller, std::string_view id,
                                              NodeAction action);
  // NOT_FOUND while pods are bound to it (drain first).
  core::Result<Written<core::Node>> DeleteNode(const Principal& caller, std::string_view id);
  core::Result<Written<std::vector<Availability>>> GpuAvailability(const Principal& caller) const;

  // --- The agent's side. Register returns the node and its secret token. UNAUTHENTICATED for an
  // unknown or expired join token, checked before anything else about the request.
  core::Status CheckJoinToken(std::string_view join_secret) const;
  core::Result<Written<std::pair<core::Node, std::string>>> RegisterNode(
      std::string_view join_secret, NodeReport report);
  core::Result<Written<core::Node>> Heartbeat(const Principal& node, NodeReport report);
  core::Result<Written<core::Pod>> ReportPod(const Principal& node, std::string_view pod_id,
                                             const PodReport& report);
  // The node's desired pods now.
  core::Result<DesiredPods> DesiredFor(const Principal& node) const;
  // Calls `notify` once, from a later Tick() or change, when the node's generation passes `after`
  // or `deadline` passes; at once if it already has.
  void WhenNodeChanges(const Principal& node, int64_t after, core::TimePoint deadline,
                       std::function<void()> notify);

  // --- Billing.
  core::Result<std::vector<core::LedgerEntry>> Ledger(const Principal& caller,
                                                      std::string_view user_id) const;
  core::Result<std::vector<core::Transition>> Transitions(const Principal& caller,
                                                          std::string_view pod_id) const;
  enum class UsageBy { kPod, kDay };
  // The ledger's charges plus what pods and volumes have run up since their last slice, so that
  // credits minus the rows' totals is the balance GetUser shows at that moment.
  core::Result<std::vector<UsageRow>> Usage(const Principal& caller, std::string_view user_id,
                                            UsageBy by) const;
  // The price of one GPU of `gpu_type` for an hour (catalog, or the admin's override). Takes the
  // lock: callers inside the control plane use PriceLocked.
  core::Money GpuPrice(std::string_view gpu_type) const;
  core::Result<Written<core::Money>> SetGpuPrice(const Principal& caller, std::string_view gpu_type,
                                                 core::Money per_hour);
  core::Money storage_price() const { return options_.storage_per_gb_month; }
  core::Duration minimum_runway() const { return options_.minimum_runway; }
  int long_poll_limit_s() const { return options_.long_poll_limit_s; }
  const catalog::Catalog& catalog() const { return catalog_; }

  // --- Volumes of their own (control_plane_volumes.cc): a person's own (by id or name), an
  // admin's view of all; another's is NOT_FOUND. A volume is attached to one pod read-write or to
  // any number read-only (pods not terminated); a conflicting attach is FAILED_PRECONDITION with
  // the pod that holds it. Delete is FAILED_PRECONDITION while a pod uses it.
  core::Result<Written<VolumeInfo>> CreateVolume(const Principal& caller, VolumeSpec spec);
  core::Result<Written<std::vector<VolumeInfo>>> ListVolumes(const Principal& caller) const;
  core::Result<Written<VolumeInfo>> GetVolume(const Principal& caller, std::string_view id) const;
  // Grows a volume (INVALID_ARGUMENT for a smaller size: its data may not fit), charged at the new
  // size from now on.
  core::Result<Written<VolumeInfo>> ResizeVolume(const Principal& caller, std::string_view id,
                                                 int size_gb);
  core::Result<Written<VolumeInfo>> DeleteVolume(const Principal& caller, std::string_view id);
  // Engine volumes that nodes may now delete: a deleted volume's data on its home node, and the
  // copy a move left behind on its source node (once the pod runs on its new node), each (node
  // id, engine volume name) handed out once. The API asks each node's agent through the relay (best
  // effort: a node that is away keeps its copy).
  std::vector<std::pair<std::string, std::string>> TakeVolumeRemovals() EXCLUDES(mutex_);
  // --- Snapshots (control_plane_snapshots.cc): a person's own, by id or name; an admin sees all.
  // Create is FAILED_PRECONDITION for a volume that holds no data yet, is moving or restoring, or
  // that a pod which runs (or is about to) has read-write: a snapshot of files being written is
  // no point in time. It answers at once (state "creating"); the volume's node makes the archive.
  core::Result<Written<core::Snapshot>> CreateSnapshot(const Principal& caller, SnapshotSpec spec);
  core::Result<Written<std::vector<core::Snapshot>>> ListSnapshots(const Principal& caller) const;
  core::Result<Written<core::Snapshot>> GetSnapshot(const Principal& caller,
                                                    std::string_view id) const;
  // FAILED_PRECONDITION while a volume is being restored from it.
  core::Result<Written<core::Snapshot>> DeleteSnapshot(const Principal& caller,
                                                       std::string_view id);
  // What node `node_id`'s agent must do for snapshots now (make one, restore one into a volume,
  // remove one), as relay requests, each handed out once until NoteStorageWork hears how it went
  // (a removal: once). The API submits them as the agent polls its relay.
  std::vector<wire::RelayRequest> TakeStorageWork(const std::string& node_id) EXCLUDES(mutex_);
  // The agent's answer to a request of TakeStorageWork: a snapshot made (or failed), a volume
  // restored (or not). A 202 (the agent is at work on it) or a 5xx (the agent away, the answer
  // late) hands the work out again a moment later, when the agent answers with the result. Returns
  // the sequence after which what it wrote is durable (0: it wrote nothing).
  struct StorageWorkAnswer {
    int status = 0;  // the agent's HTTP status; 5xx: not done, hand it out again
    // kSnapshotVolume done: the archive's size and SHA-256 (hex); -1 and "" when not said.
    int64_t size_bytes = -1;
    std::string sha256;
    std::string error;  // what the agent said when it failed
  };
  uint64_t NoteStorageWork(const wire::RelayRequest& work, const StorageWorkAnswer& answer)
      EXCLUDES(mutex_);
  // Where a move fetches from: the node that holds move `move_id` of a pod bound to `caller`'s
  // node, and the engine volume. NOT_FOUND for a move the caller's pods do not have (any more).
  struct MoveSource {
    std::string node_id;
    std::string node_name;
    std::string volume;
    bool reachable = false;
  };
  core::Result<MoveSource> MoveSourceFor(const Principal& caller, std::string_view move_id) const;

  // --- Serverless endpoints and their jobs (control_plane_endpoints.cc). Endpoints are their
  // owner's (admins see all); another's is NOT_FOUND.
  core::Result<Written<EndpointInfo>> CreateEndpoint(const Principal& caller, EndpointSpec spec);
  core::Result<Written<std::vector<EndpointInfo>>> ListEndpoints(const Principal& caller) const;
  core::Result<Written<EndpointInfo>> GetEndpoint(const Principal& caller,
                                                  std::string_view id) const;
  // Settings of the workers (image, env, GPU) apply to workers started after the change.
  core::Result<Written<EndpointInfo>> UpdateEndpoint(const Principal& caller, std::string_view id,
                                                     EndpointSpec spec);
  // Stops its workers, cancels its unfinished jobs and deletes it with its jobs.
  core::Result<Written<EndpointInfo>> DeleteEndpoint(const Principal& caller, std::string_view id);
  core::Result<Written<serverless::Job>> SubmitJob(const Principal& caller,
                                                   std::string_view endpoint_id,
                                                   JobRequest request);
  core::Result<Written<serverless::Job>> GetJob(const Principal& caller,
                                                std::string_view endpoint_id,
                                                std::string_view job_id) const;
  core::Result<Written<serverless::Job>> CancelJob(const Principal& caller,
                                                   std::string_view endpoint_id,
                                                   std::string_view job_id);
  core::Result<Written<serverless::Job>> RetryJob(const Principal& caller,
                                                  std::string_view endpoint_id,
                                                  std::string_view job_id);
  // Cancels every queued job; returns how many.
  core::Result<Written<int>> PurgeQueue(const Principal& caller, std::string_view endpoint_id);
  // Calls `notify` once, after the lock is released, when job `job_id` changes status (at once if
  // it is finished or unknown) or `deadline` passes (at a later Tick).
  void WhenJobChanges(std::string_view job_id, core::TimePoint deadline,
                      std::function<void()> notify);
  // The worker's side, authenticated by its token: UNAUTHENTICATED for a wrong one, NOT_FOUND for
  // a worker the endpoint does not have (any more). TakeJob gives the oldest queued job (then
  // IN_PROGRESS on it), or nullopt; FinishJob takes its result (FAILED_PRECONDITION when the job
  // is no longer its own: cancelled, timed out or given to another worker).
  // A worker that asks while it has a job has dropped it (kDropped: it is re-queued as if the
  // worker were lost), unless it says it still runs it (kStillRunning, RunPod's
  // job_in_progress=1): then it gets no second one (a worker runs one job at a time).
  enum class WorkerJob { kDropped, kStillRunning };
  core::Result<Written<std::optional<serverless::Job>>> TakeJob(
      std::string_view endpoint_id, std::string_view worker_id, std::string_view token,
      WorkerJob current = WorkerJob::kDropped);
  core::Result<Written<serverless::Job>> FinishJob(std::string_view endpoint_id,
                                                   std::string_view worker_id,
                                                   std::string_view token, std::string_view job_id,
                                                   std::string output, std::string error);
  // A worker's partial output (JSON text) of its job, kept for /stream
  // (control_plane_job_stream.cc): FAILED_PRECONDITION when the job is not IN_PROGRESS on it;
  // RESOURCE_EXHAUSTED when kMaxUnreadStreamChunks or kMaxUnreadStreamBytes wait unread already.
  core::Result<Written<serverless::Job>> StreamJobOutput(std::string_view endpoint_id,
                                                         std::string_view worker_id,
                                                         std::string_view token,
                                                         std::string_view job_id,
                                                         std::string output) EXCLUDES(mutex_);
  // The job and the partial outputs streamed for it since the last read, which this read takes.
  // `streamed` is false when its worker never streamed (then /stream shows its final output).
  struct StreamRead {
    serverless::Job job;
    std::vector<std::string> chunks;
    bool streamed = false;
  };
  core::Result<Written<StreamRead>> ReadJobStream(const Principal& caller,
                                                  std::string_view endpoint_id,
                                                  std::string_view job_id) EXCLUDES(mutex_);
  // Calls `notify` once when a job is queued on the endpoint (at once if one is) or `deadline`
  // passes: a worker's long poll.
  void WhenJobQueued(std::string_view endpoint_id, core::TimePoint deadline,
                     std::function<void()> notify);

  // --- Push workers (control_plane_endpoint_push.cc) ---
  // The queued jobs of http-mode endpoints that their ready workers have room for (fewer than
  // http_concurrency pushed each), now IN_PROGRESS on them; for the JobPusher to post.
  std::vector<PushedJob> TakePushJobs() EXCLUDES(mutex_);
  // The worker's answer to a pushed job (its HTTP status, content type and body; the relay's own
  // 502 and 504 for a worker it could not reach): 2xx COMPLETED with the body as its output (JSON
  // when it is JSON, else a string); 500 and above queues it again as for a lost worker (at most
  // max_retries times, then FAILED); any other status FAILED. Nothing happens when the job is no
  // longer IN_PROGRESS on that worker (cancelled, timed out). Returns the change's sequence.
  uint64_t AnswerPushedJob(const PushedJob& job, int status, std::string_view content_type,
                           std::string body) EXCLUDES(mutex_);
  // `hook` is called, outside the lock, when an http-mode endpoint may have work for the
  // JobPusher: a job queued on it, and every tick that finds one queued. Empty: none.
  void SetPushHook(std::function<void()> hook) EXCLUDES(mutex_);

  // The webhooks of jobs finished since the last call, for the server's WebhookSender.
  std::vector<WebhookDelivery> TakeWebhooks() EXCLUDES(mutex_);

  // --- Events and the audit log (control_plane_events.cc). A person sees the events of their own
  // pods and account, and those of a project's pod they may see when they ask by the pod; an
  // admin sees all (`query.user_id` then filters by owner). The query's user_id is the caller's
  // (or that pod's payer's) for anyone else.
  core::Result<std::vector<core::Event>> Events(const Principal& caller,
                                                store::EventQuery query) const EXCLUDES(mutex_);
  // Appends `entry` (its seq is assigned) and returns the commit sequence that makes it durable.
  uint64_t RecordAudit(core::AuditEntry entry) EXCLUDES(mutex_);
  // Event webhooks: a person's own (at most 10), an admin's too; another's is NOT_FOUND. A new
  // one gets the events from its creation on. INVALID_ARGUMENT for a URL that is not http://.
  core::Result<Written<EventWebhookInfo>> CreateEventWebhook(const Principal& caller,
                                                             std::string url,
                                                             std::vector<std::string> kinds);
  core::Result<Written<std::vector<EventWebhookInfo>>> ListEventWebhooks(
      const Principal& caller) const;
  core::Result<Written<EventWebhookInfo>> DeleteEventWebhook(const Principal& caller,
                                                             std::string_view id);
  // For the dispatcher (event_webhooks.h): the subscriptions now; the next events one is owed (its
  // owner's, after its cursor, at most `limit`); a try for its log; and its cursor moved on,
  // returning once that is durable (so that a kill -9 sends again only the event under way).
  std::vector<core::EventWebhook> EventWebhooks() const EXCLUDES(mutex_);
  core::Result<std::vector<core::Event>> EventsOwed(const core::EventWebhook& hook,
                                                    size_t limit) const;
  void NoteWebhookAttempt(std::string_view id, WebhookAttempt attempt) EXCLUDES(mutex_);
  void WebhookDelivered(std::string_view id, int64_t through_seq) EXCLUDES(mutex_);
  // Admin only.
  core::Result<std::vector<core::AuditEntry>> AuditLog(const Principal& caller,
                                                       const store::AuditQuery& query) const;

  // --- Auto-stop (control_plane_idle.cc). HTTP through the proxy to a running pod is a sign of
  // use for its idle rule.
  void NoteProxyTraffic(std::string_view pod_id) EXCLUDES(mutex_);

  // Schedules pending pods, marks silent nodes unreachable, charges running pods and volumes,
  // stops the pods of users out of money or over their cap, and wakes agents whose desired state
  // changed. Returns the commit sequence of what it wrote.
  uint64_t Tick();

  Gauges gauges() const;
  core::TimePoint Now() const;
  // The stored records Open could not read, and those set aside with them (documents.h), each as
  // "pod pod_1: why": not served, and kept in the store as they are for an operator to mend.
  std::vector<std::string> UnreadableRecords() const EXCLUDES(mutex_);

 private:
  ControlPlane(store::Store& store, store::CommitQueue& queue, catalog::Catalog catalog,
               core::Clock& clock, Entropy& entropy, ControlPlaneOptions options);
  class Change;
  class Locked;

  core::Status Load(std::string* new_admin_token) EXCLUDES(mutex_);
  // The history's last seqs and the event webhooks (control_plane_events.cc).
  void LoadEvents(const store::Snapshot& snapshot, std::vector<core::EventWebhook> webhooks)
      REQUIRES(mutex_);
  uint64_t TickPods() EXCLUDES(mutex_);  // Tick's part for pods and nodes
  // Tick's part for events (control_plane_events.cc): low balances, retention.
  uint64_t TickEvents() EXCLUDES(mutex_);
  core::Status AddBuiltInTemplates() REQUIRES(mutex_);

  std::optional<std::string> Serialize(store::Collection collection, const std::string& id) const
      REQUIRES(mutex_);
  std::string NewId(std::string_view prefix) REQUIRES(mutex_);
  std::string IssueToken(Change& change, const std::string& user_id, std::string name)
      REQUIRES(mutex_);
  void Credit(Change& change, core::User& user, core::Money amount, std::string note)
      REQUIRES(mutex_);
  // The ID of the user whose ID or name (unique, as `users create NAME` took) is `id_or_name`;
  // empty when there is none.
  std::string UserIdFor(std::string_view id_or_name) const REQUIRES(mutex_);
  bool CanSee(const Principal& caller, const core::Template& spec) const REQUIRES(mutex_);
  core::Result<const core::Template*> FindTemplate(const Principal& caller,
                                                   std::string_view id) const REQUIRES(mutex_);
  // A pod the caller may act on: their own, one of a project where they are a member or the
  // owner, or any for an admin. NOT_FOUND for one they may not see; PERMISSION_DENIED for a
  // project's viewer.
  core::Result<core::Pod*> FindOwnPod(const Principal& caller, std::string_view id)
      REQUIRES(mutex_);
  // `id` if a pod has it, else the id of the one live pod of that name the caller sees (several:
  // INVALID_ARGUMENT listing them); no match comes back as given, for the caller's NOT_FOUND.
  core::Result<std::string> PodIdFor(const Principal& caller, std::string_view id) const
      REQUIRES(mutex_);
  // CreatePod's change: the pod `caller` asks for, checked, added and placed if it can be.
  core::Result<core::Pod*> AddPod(Change& change, const Principal& caller, PodSpec spec)
      REQUIRES(mutex_);
  // Who may see or change what (projects and roles): state/access_policy.h.
  using Access = AccessPolicy::Access;
  core::Money PriceLocked(std::string_view gpu_type) const REQUIRES(mutex_);  // GpuPrice
  core::Money PodGpuRate(const core::Pod& pod) const REQUIRES(mutex_);
  void Rerate(const core::Pod& pod)
      REQUIRES(mutex_);  // after any change to a pod's state, desired state or price
  core::Money LiveBalance(const core::User& user, core::TimePoint now) const REQUIRES(mutex_);
  // A user's or a project's monthly budget, for the routines that check and act on both
  // (control_plane_events.cc): its fields, and its words in messages.
  struct Budget {
    std::string id;       // the user's or project's: its month's charges in month_spend_
    std::string subject;  // "you have" / "project vision-team has"
    std::string whose;    // "your" / "project vision-team's"
    std::string its;      // "your" / "its"
    std::string raise;    // how to raise it
    core::Money monthly;
    core::BudgetAction action = core::BudgetAction::kNotify;
    std::string* warned_month = nullptr;
    std::string* reached_month = nullptr;
    std::string told_user_id;  // who is told: the user, or the project's owner
  };
  static Budget BudgetOf(core::User& user);
  static Budget BudgetOf(core::Project& project);
  // FAILED_PRECONDITION once the budget is reached this month and its action stops a pod like
  // this one.
  core::Status CheckBudget(const Budget& budget, bool interruptible, core::TimePoint now) const
      REQUIRES(mutex_);
  // Whether `pod` (its owner_id and project_id set) may start, costing `rate` per hour: its
  // payer's budget, and its project's budget and cap. RESOURCE_EXHAUSTED past the project's cap,
  // with the figures.
  core::Status CheckPayerBudgets(const core::Pod& pod, core::Money rate, core::TimePoint now)
      REQUIRES(mutex_);
  core::Status CheckCanAfford(const core::User& user, core::Money rate_after,
                              core::TimePoint now) const REQUIRES(mutex_);
  // RESOURCE_EXHAUSTED when `user` would pass a quota with one more pod (`pending`: one more
  // waiting for a GPU; a new pod is both), naming the limit and how to raise it.
  core::Status CheckQuota(const core::User& user, bool new_pod) const REQUIRES(mutex_);
  // `user` as answers show it: the quotas in force.
  core::User Shown(core::User user) const;
  void SetState(Change& change, core::Pod& pod, core::PodState to, core::TimePoint at,
                std::string reason) REQUIRES(mutex_);
  void ChargePod(Change& change, core::Pod& pod, core::TimePoint to) REQUIRES(mutex_);
  // A run that ended at `end`, before the seconds the meter has already charged: gives those back.
  void RefundGpuPast(Change& change, core::Pod& pod, core::TimePoint end) REQUIRES(mutex_);
  void SetDesired(Change& change, core::Pod& pod, core::DesiredState desired, std::string reason)
      REQUIRES(mutex_);
  void TouchNode(Change& change, const std::string& node_id) REQUIRES(mutex_);
  // Each node with a live pod of these KeyHolders, whose SSH keys changed (DesiredFor's ssh_keys).
  void TouchKeyHolders(Change& change, const std::set<std::string>& holders) REQUIRES(mutex_);
  void Notify(Change& change, core::User& user, std::string notice) REQUIRES(mutex_);
  // Notify's notice "pod <id> <reason>" to the pod's owner, and the event `kind` about it.
  void NotifyPod(Change& change, const core::Pod& pod, std::string_view kind,
                 const std::string& reason) REQUIRES(mutex_);
  void MarkUnreachable(Change& change, core::Node& node) REQUIRES(mutex_);
  // Auto-stop (control_plane_idle.cc): a heartbeat's samples of its running pods, and the rules.
  void NoteActivity(const core::Node& node, const std::vector<wire::PodActivity>& samples)
      REQUIRES(mutex_);
  void AutoStop(Change& change, core::TimePoint now) REQUIRES(mutex_);
  // Pods left stopped (or exited, or failed) past their terminate_after_stopped: terminated.
  void AutoTerminate(Change& change, core::TimePoint now) REQUIRES(mutex_);
  // Budgets (control_plane_events.cc): a charge counted in its user's month (and its project's),
  // and each budget's 80 % warning and 100 % action, on `pod_ids` (the user's or project's pods).
  void NoteCharge(const core::LedgerEntry& entry) REQUIRES(mutex_);
  void CheckBudgets(Change& change, core::TimePoint now) REQUIRES(mutex_);
  void CheckBudget(Change& change, const Budget& budget, const std::set<std::string>& pod_ids,
                   core::TimePoint now) REQUIRES(mutex_);
  struct PodUse;
  // The pod's use record, new for a new run. REQUIRES: the pod is running.
  PodUse& UseOf(const core::Pod& pod) REQUIRES(mutex_);
  // Cordons `node` and stops its running pods, telling their owners `reason`.
  void Drain(Change& change, core::Node& node, const std::string& reason) REQUIRES(mutex_);
  void Unbind(Change& change, core::Pod& pod) REQUIRES(mutex_);
  void Schedule(Change& change, core::TimePoint now) REQUIRES(mutex_);
  void EnforceLimits(Change& change, core::TimePoint now) REQUIRES(mutex_);
  std::vector<sched::Node> SchedulerNodes() const REQUIRES(mutex_);
  std::string ResolveCheapest(int gpu_count, int gpu_milli) const REQUIRES(mutex_);
  std::string NodeName(const std::string& node_id) const REQUIRES(mutex_);
  core::Status ResolveByAdvice(const advisor::Workload& workload, std::string* gpu_type,
                               int* gpu_count) const REQUIRES(mutex_);
  core::Status CheckNodeReport(NodeReport& report) const REQUIRES(mutex_);
  core::Result<std::string> BillingSubject(const Principal& caller, std::string_view user_id) const;
  // Volumes (control_plane_volumes.cc).
  void LoadVolumes(std::vector<core::Volume> volumes) REQUIRES(mutex_);
  // Snapshots (control_plane_snapshots.cc).
  void LoadSnapshots(std::vector<core::Snapshot> snapshots) REQUIRES(mutex_);
  // The id of the caller's snapshot `id` (an id or its name), or a project's they may `access`.
  core::Result<std::string> FindSnapshot(const Principal& caller, std::string_view id,
                                         Access access) const REQUIRES(mutex_) {
    return FindOwned(caller, snapshots_, id, access, "snapshot", "suanli volumes snapshots");
  }
  // The volume `volume` made from the caller's snapshot `snapshot_id` (id or name): its size and
  // home, state kRestoring; INVALID_ARGUMENT for a size below the snapshot's volume's.
  core::Status RestoreInto(const Principal& caller, std::string_view snapshot_id,
                           core::Volume& volume) const REQUIRES(mutex_);
  void ChargeSnapshot(Change& change, core::Snapshot& snapshot, core::TimePoint to)
      REQUIRES(mutex_);
  // Whether `pod` has a volume read-write of which a snapshot is being made: it is not placed
  // until the snapshot is done (a start would write into files being copied).
  bool WaitsForSnapshot(const core::Pod& pod) const REQUIRES(mutex_);
  // As node `node` is removed: its snapshots' archives are gone with it (failed, no longer
  // billed), and volumes it was restoring end empty.
  void LoseSnapshotsOn(Change& change, const core::Node& node) REQUIRES(mutex_);
  // The id of the caller's volume `id` (an id or its name), or a project's they may `access`;
  // NOT_FOUND saying how to list them, PERMISSION_DENIED for a project's viewer who would write.
  core::Result<std::string> FindVolume(const Principal& caller, std::string_view id,
                                       Access access) const REQUIRES(mutex_) {
    return FindOwned(caller, volumes_, id, access, "volume", "suanli volumes list");
  }
  // The id of what `id` names among `things` (volumes, snapshots: each with an id, a name, an
  // owner and maybe a project): by id, or by name, the caller's own first, then a project's the
  // caller sees (Allowed decides both).
  template <typename Things>
  core::Result<std::string> FindOwned(const Principal& caller, const Things& things,
                                      std::string_view id, Access access, std::string_view what,
                                      std::string_view listing) const REQUIRES(mutex_) {
    const auto seen = [&](const auto& thing) REQUIRES(mutex_) {
      return access_.Allowed(caller, thing.owner_id, thing.project_id, Access::kRead);
    };
    std::string found;
    if (const auto it = things.find(std::string(id)); it != things.end() && seen(it->second)) {
      found = it->first;
    }
    for (bool of_a_project : {false, true}) {
      for (const auto& [thing_id, thing] : things) {
        if (!found.empty()) break;
        if (thing.name == id && thing.project_id.empty() != of_a_project && seen(thing) &&
            (of_a_project || thing.owner_id == caller.user_id)) {
          found = thing_id;
        }
      }
    }
    if (found.empty()) {
      return core::NotFoundError("you have no " + std::string(what) + " " + std::string(id) + " (" +
                                 std::string(listing) + ")");
    }
    const auto& thing = things.at(found);
    if (access == Access::kWrite &&
        !access_.Allowed(caller, thing.owner_id, thing.project_id, Access::kWrite)) {
      const core::Project* project = access_.Find(thing.project_id);
      return core::PermissionDeniedError(
          std::string(what) + " " + thing.name + " is project " +
          (project == nullptr ? thing.project_id : project->name) +
          "'s, which you only view; its owner can make you a member");
    }
    return found;
  }
  VolumeInfo InfoOf(const core::Volume& volume, core::TimePoint now) const REQUIRES(mutex_);
  // The pods (not terminated) that use volume `id`, and whether one has it read-write.
  std::vector<const core::Pod*> UsersOf(const std::string& volume_id) const REQUIRES(mutex_);
  // `requests` as mounts of volumes (by id), each named once, at a clean mount path distinct from
  // the others and from `taken_path` (a pod's own volume's; "": none): the caller's own for a
  // person's pod (`project_id` ""), the project's for a project's pod, so that no member reaches
  // another's data and no project's data leaves it.
  core::Result<std::vector<core::VolumeMount>> ResolveVolumes(
      const Principal& caller, const std::vector<VolumeRequest>& requests,
      const std::string& taken_path, const std::string& project_id) const REQUIRES(mutex_);
  // Resolves `requests` into `pod.volumes` (ResolveVolumes), free of conflicting attaches.
  core::Status AttachVolumes(const Principal& caller, const std::vector<VolumeRequest>& requests,
                             core::Pod& pod) const REQUIRES(mutex_);
  // The volumes `spec` names (if it names any) into `endpoint.volumes`: its owner's.
  core::Status MountEndpointVolumes(const EndpointSpec& spec, serverless::Endpoint& endpoint) const
      REQUIRES(mutex_);
  // A storage charge of `amount` for [from, to) of volume or snapshot `object_id` to its owner
  // (a ledger entry of kind storage); none for zero. Returns what was charged.
  core::Money ChargeStorage(Change& change, const std::string& owner_id,
                            const std::string& object_id, core::Money amount, core::TimePoint from,
                            core::TimePoint to, std::string note) REQUIRES(mutex_);
  void ChargeVolume(Change& change, core::Volume& volume, core::TimePoint to) REQUIRES(mutex_);
  void TickVolumes(Change& change, core::TimePoint now) REQUIRES(mutex_);
  core::Money UnbilledVolumes(const std::string& user_id, core::TimePoint now) const
      REQUIRES(mutex_);
  // Scheduling: the node that holds the pod's data (preferred), or must run it (a volume in use
  // by a pod bound there, or on its way there, or a node that is away); "" for none. Returns the
  // time until which the pod waits for that node rather than move its data, when it does.
  std::optional<core::TimePoint> PlaceNearData(const core::Pod& pod, sched::PodRequest& request,
                                               core::TimePoint now) const REQUIRES(mutex_);
  // When a pod pending since `pod.state_since` stops waiting for `node`, which holds its data and
  // is full, and moves the data instead: after as long as the move would take (max_data_wait at
  // most). nullopt when it should not wait (or no longer): `node` could never hold it, is cordoned.
  std::optional<core::TimePoint> DataWaitEnd(const core::Pod& pod, const core::Node& node,
                                             core::TimePoint now) const REQUIRES(mutex_);
  // As `pod` is bound to node `to_node` (before its last_node_id changes): the moves of the data
  // it lacks there.
  void PlanMoves(Change& change, core::Pod& pod, const std::string& to_node, core::TimePoint now)
      REQUIRES(mutex_);
  // For a terminate's reason: "; its own 20 GB volume is deleted; its volumes data, models are
  // kept (suanli volumes)", as they apply.
  std::string VolumesKept(const core::Pod& pod) const REQUIRES(mutex_);
  // As `pod` runs: the copies its moves left behind may go (TakeVolumeRemovals).
  void NoteRunning(const core::Pod& pod) REQUIRES(mutex_);
  // As `pod` leaves its node with moves unfinished: its data stays where it was.
  void AbandonMoves(Change& change, core::Pod& pod) REQUIRES(mutex_);
  // A report of a move's progress (events) or end (the data's new home).
  void NoteMove(Change& change, core::Pod& pod, const wire::MoveProgress& move,
                const std::string& node_id) REQUIRES(mutex_);
  // Serverless (control_plane_endpoints.cc).
  void LoadEndpoints(std::vector<serverless::Endpoint> endpoints, std::vector<serverless::Job> jobs)
      REQUIRES(mutex_);
  // Job timeouts and expiry, lost workers, the scaler's decisions, and the workers it asked for,
  // created in the same critical section (AddPod). Returns the commit sequence of what it wrote.
  uint64_t TickEndpoints() EXCLUDES(mutex_);
  // SubmitJob's change.
  struct Enqueued {
    bool no_worker = false;  // the endpoint has no live worker to take the job
    bool push = false;       // its workers are pushed their jobs (worker_mode http)
  };
  core::Result<Written<serverless::Job>> EnqueueJob(const Principal& caller,
                                                    std::string_view endpoint_id,
                                                    JobRequest request, Enqueued* enqueued)
      EXCLUDES(mutex_);
  // The caller's endpoint, or a project's they may `access` (Allowed); NOT_FOUND for one they do
  // not see, PERMISSION_DENIED for a project's viewer who would change it or run a job.
  core::Result<serverless::Endpoint*> FindOwnEndpoint(const Principal& caller, std::string_view id,
                                                      Access access = Access::kWrite)
      REQUIRES(mutex_);
  core::Result<serverless::Job*> FindOwnJob(const Principal& caller, std::string_view endpoint_id,
                                            std::string_view job_id, Access access = Access::kWrite)
      REQUIRES(mutex_);
  core::Result<WorkerRuntime*> FindWorker(std::string_view endpoint_id, std::string_view worker_id,
                                          std::string_view token) REQUIRES(mutex_);
  EndpointInfo InfoOf(const serverless::Endpoint& endpoint) const REQUIRES(mutex_);
  void AddEndpointGauges(Gauges& gauges) const REQUIRES(mutex_);
  // Every change of a job's status goes through JobChanged: it is written (and so indexed), its
  // webhook queued and its waiters woken. Enqueue also wakes the workers' long polls.
  void JobChanged(Change& change, const serverless::Job& job) REQUIRES(mutex_);
  void Enqueue(Change& change, const serverless::Job& job) REQUIRES(mutex_);
  // Its job (if any) is re-queued or failed; the worker is asked to stop.
  void LoseWorker(Change& change, const serverless::Endpoint& endpoint, const std::string& pod_id,
                  WorkerRuntime& worker, std::string_view reason) REQUIRES(mutex_);
  void StopWorker(Change& change, const std::string& pod_id, WorkerRuntime& worker,
                  std::string reason) REQUIRES(mutex_);

  friend class ControlPlaneOnStoreTest;  // checks the pod and job indexes after each test

  store::Store& store_;
  store::CommitQueue& queue_;
  catalog::Catalog catalog_;
  core::Clock& clock_;
  Entropy& entropy_;
  const ControlPlaneOptions options_;

  // Calls the push hook, if any, outside the lock.
  void WakePusher() EXCLUDES(mutex_);
  mutable core::Mutex mutex_;
  std::map<std::string, core::User> users_ GUARDED_BY(mutex_);
  // What Load could not read (documents.h): "user usr_1: why".
  std::vector<std::string> unreadable_ GUARDED_BY(mutex_);
  Credentials credentials_ GUARDED_BY(mutex_);  // API, node and join tokens
  std::map<std::string, core::SshKey> ssh_keys_ GUARDED_BY(mutex_);
  std::map<std::string, core::Template> templates_ GUARDED_BY(mutex_);
  PodRegistry pods_ GUARDED_BY(mutex_);  // and their indexes, kept by Change::Dirty
  std::map<std::string, core::Node> nodes_ GUARDED_BY(mutex_);
  std::map<std::string, core::Money> price_overrides_ GUARDED_BY(mutex_);
  NodeWaiters waiters_ GUARDED_BY(mutex_);  // due callbacks run by Locked after unlock
  int64_t last_transition_seq_ GUARDED_BY(mutex_) = 0;
  int64_t last_ledger_seq_ GUARDED_BY(mutex_) = 0;
  int64_t last_event_seq_ GUARDED_BY(mutex_) = 0;
  int64_t last_audit_seq_ GUARDED_BY(mutex_) = 0;
  std::optional<core::TimePoint> last_expiry_ GUARDED_BY(mutex_);  // of old events and audit
  std::optional<core::TimePoint> last_auto_terminate_ GUARDED_BY(mutex_);
  // Pods warned that terminate_after_stopped will tear them down, with the stop it was counted
  // from (in memory: a restart may warn again).
  std::map<std::string, core::TimePoint> terminate_warned_ GUARDED_BY(mutex_);
  // Users told their balance is low, until it lasts again (in memory: a restart may tell again).
  std::set<std::string> low_balance_warned_ GUARDED_BY(mutex_);
  // Running pods with auto-stop settings: their last sign of use and the warnings given (in
  // memory: after a restart a pod's idle window starts again, so it never stops early).
  struct PodUse {
    core::TimePoint running_since;  // the run this is about
    core::TimePoint last_active;
    std::string last_busy;  // what was busy then ("gpu 40%", "http", ...)
    billing::ActivitySample last_sample;
    bool sampled = false;
    bool ssh_known = false;
    bool idle_warned = false;
    bool runtime_warned = false;
  };
  std::map<std::string, PodUse> pod_use_ GUARDED_BY(mutex_);
  std::map<std::string, core::EventWebhook> webhooks_by_id_ GUARDED_BY(mutex_);
  billing::MonthSpend month_spend_ GUARDED_BY(mutex_);  // per user and project, for the budgets
  std::map<std::string, std::vector<WebhookAttempt>> webhook_log_ GUARDED_BY(mutex_);
  core::TimePoint started_at_ GUARDED_BY(mutex_);  // when Load ran
  uint64_t last_pod_sequence_ GUARDED_BY(mutex_) = 0;
  int64_t charged_micros_ GUARDED_BY(mutex_) = 0;
  bool capacity_changed_ GUARDED_BY(mutex_) = true;  // since the last round: a node or a freed GPU
  billing::SpendTracker spend_ GUARDED_BY(mutex_);
  mutable std::unordered_map<std::string, core::Money> price_cache_ GUARDED_BY(mutex_);
  AccessPolicy access_ GUARDED_BY(mutex_);  // the projects, and who may see or change what
  // Serverless endpoints, their jobs (until their TTL passes), queues and workers; the jobs'
  // indexes are kept by Change::Dirty.
  ServerlessRegistry serverless_ GUARDED_BY(mutex_);
  std::function<void()> push_hook_ GUARDED_BY(mutex_);
  std::vector<WebhookDelivery> webhooks_ GUARDED_BY(mutex_);  // TakeWebhooks
  std::map<std::string, core::Volume> volumes_ GUARDED_BY(mutex_);
  std::vector<std::pair<std::string, std::string>> volume_removals_ GUARDED_BY(mutex_);
  std::map<std::string, core::Snapshot> snapshots_ GUARDED_BY(mutex_);
  // The snapshots being made and the volumes being restored (by id), each with the time before
  // which its work is not handed out: none at first, max while an agent has it (TakeStorageWork),
  // a moment after an agent said it is at work on it (202) or could not take it (5xx); gone once
  // it is done. And snapshots to remove: (node id, snapshot id), each handed out once (best effort,
  // like volume removals).
  std::map<std::string, core::TimePoint> storage_work_ GUARDED_BY(mutex_);
  // The earliest end of a pod's wait for the node that holds its data (DataWaitEnd): the pending
  // pods are tried again then. And the rate moves have shown (bytes a second), in memory.
  std::optional<core::TimePoint> data_wait_until_ GUARDED_BY(mutex_);
  double move_bytes_per_second_ GUARDED_BY(mutex_) = 0;
  std::vector<std::pair<std::string, std::string>> snapshot_removals_ GUARDED_BY(mutex_);
  // Per pod: the copies its finished moves left on their source nodes, removed once it runs (in
  // memory: after a restart of the server they stay, which wastes disk but loses nothing).
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> leftover_copies_
      GUARDED_BY(mutex_);
};

}  // namespace suanli::server
