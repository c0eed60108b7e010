// The web console's files (web/ in the source tree), compiled into the binary so `suanli server`
// serves them from any folder and offline. The console is a client of the public /v1 API like any
// other: these files are all the server knows of it.
#pragma once

#include <optional>
#include <string_view>

#include "net/http.h"

namespace suanli::server {

// The answer to GET `path` when it is one of the console's: "/" (and "/index.html") is the page,
// "/console/<file>" its styles and chart library, "/console/js/<path>" its ES modules (web/js/).
// nullopt for any other path. Every answer forbids framing and loading anything from elsewhere
// (Content-Security-Policy), and is revalidated on each load (the files change with the binary).
std::optional<net::HttpResponse> ConsoleFile(std::string_view path);

}  // namespace suanli::server
