// The store's documents of serverless endpoints and jobs (documents.h is the format's contract:
// every field, forgiving only of a field an older version did not write).
#pragma once

#include <boost/json/object.hpp>
#include <string>

#include "core/status.h"
#include "serverless/endpoint.h"
#include "serverless/job.h"

namespace suanli::server {

boost::json::object ToDocument(const serverless::Endpoint& endpoint);
boost::json::object ToDocument(const serverless::Job& job);
core::Result<serverless::Endpoint> EndpointFromDocument(const boost::json::object& document);
core::Result<serverless::Job> JobFromDocument(const boost::json::object& document);
std::string DocumentText(const serverless::Endpoint& endpoint);
std::string DocumentText(const serverless::Job& job);

}  // namespace suanli::server
