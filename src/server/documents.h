// Documents: the control plane's entities as the store keeps them (store::Store holds JSON
// documents by collection and id).
//
// The store's own format, apart from the API's views (wire/views.h): a document holds every field,
// secrets as hashes only, and may be renamed or migrated here without a client noticing. Reading
// is forgiving in one way only: a field a document lacks (written by an older version) keeps its
// default. A field of the wrong type is a corrupt store, refused with the entity's id, never
// guessed at. Times are RFC 3339 UTC with milliseconds; money is integer micro-dollars.
#pragma once

#include <boost/json/object.hpp>
#include <map>
#include <string>
#include <vector>

#include "core/domain.h"
#include "core/event.h"
#include "core/money.h"
#include "core/status.h"
#include "serverless/endpoint.h"
#include "serverless/job.h"
#include "store/store.h"

namespace suanli::server {

boost::json::object ToDocument(const core::User& user);
boost::json::object ToDocument(const core::ApiToken& token);
boost::json::object ToDocument(const core::SshKey& key);
boost::json::object ToDocument(const core::Template& spec);
boost::json::object ToDocument(const core::Pod& pod);
boost::json::object ToDocument(const core::Node& node);  // without gpu_health, kept in memory only
boost::json::object ToDocument(const core::JoinToken& token);

core::Result<core::User> UserFromDocument(const boost::json::object& document);
core::Result<core::ApiToken> ApiTokenFromDocument(const boost::json::object& document);
core::Result<core::SshKey> SshKeyFromDocument(const boost::json::object& document);
core::Result<core::Template> TemplateFromDocument(const boost::json::object& document);
core::Result<core::Pod> PodFromDocument(const boost::json::object& document);
core::Result<core::Node> NodeFromDocument(const boost::json::object& document);
core::Result<core::JoinToken> JoinTokenFromDocument(const boost::json::object& document);

// Every entity a store snapshot holds, decoded, for ControlPlane::Load.
struct StoredEntities {
  std::vector<core::User> users;
  std::vector<core::ApiToken> tokens;
  std::vector<core::SshKey> ssh_keys;
  std::vector<core::Template> templates;
  std::vector<core::Pod> pods;
  std::vector<core::Node> nodes;
  std::vector<core::JoinToken> join_tokens;
  std::map<std::string, core::Money> gpu_prices;  // the admin's overrides, per GPU type
  std::vector<serverless::Endpoint> endpoints;    // endpoint_documents.h
  std::vector<serverless::Job> jobs;
  std::vector<core::EventWebhook> webhooks;
  std::vector<core::Volume> volumes;  // volume_documents.h
  std::vector<core::Snapshot> snapshots;
  std::vector<core::Project> projects;  // project_documents.h
  // A document that could not be read (not JSON, or not the entity it should be), or one set aside
  // because what it belongs to could not be (SetAsideDependents). Neither is served nor written:
  // the store keeps it as it is, for an operator to mend, and the server serves the rest.
  struct Unreadable {
    store::Collection collection;
    std::string id;
    std::string
        why;  // "balance_micros: must be an integer from ...", "its owner usr_1 is unreadable"
  };
  std::vector<Unreadable> unreadable;
};
// Every readable document; each unreadable one in `unreadable`, naming what is wrong with it.
// Never fails for one document: a server refusing to start for one bad row serves no one.
StoredEntities DecodeDocuments(const std::vector<store::Document>& documents);
// Sets aside (into `unreadable`) what belongs to an unreadable user, project, endpoint or node:
// the control plane assumes every pod's owner, every token's user and every job's endpoint exists.
void SetAsideDependents(StoredEntities& entities);
// "user usr_1", "pod pod_2": an unreadable record as the operator finds it in the store.
std::string Describe(const StoredEntities::Unreadable& record);

// The stored text of each entity (what ControlPlane writes in a store::Batch).
std::string DocumentText(const core::User& user);
std::string DocumentText(const core::ApiToken& token);
std::string DocumentText(const core::SshKey& key);
std::string DocumentText(const core::Template& spec);
std::string DocumentText(const core::Pod& pod);
std::string DocumentText(const core::EventWebhook& hook);
std::string DocumentText(const core::Node& node);
std::string DocumentText(const core::JoinToken& token);
// The settings document "prices": the admin's GPU price overrides.
inline constexpr std::string_view kPricesDocumentId = "prices";
std::string PricesDocumentText(const std::map<std::string, core::Money>& gpu_prices);

}  // namespace suanli::server
