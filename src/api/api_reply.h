// The API's replies: JSON bodies with their HTTP codes, errors from a Status or a message, a
// job as a caller may see it, and integer query parameters (used by the api_server*.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/http_server.h"
#include "api/identity.h"
#include "common/status.h"

namespace tiresias::api {

// The HTTP code of a fault: 400 bad request, 401, 403, 404, 409 conflict, 503, 507, else 500.
int HttpCode(const Status& s);
// Text from requests (paths, values) may be invalid UTF-8: replaced, never thrown.
std::string Dump(const nlohmann::json& j);
// A value echoed in an error message: short, whatever the caller sent.
std::string Echo(const nlohmann::json& j);
HttpResponse Reply(int code, const nlohmann::json& body);
// {"error": msg} with `code`; or the Status's message with its HttpCode.
HttpResponse Fail(int code, const std::string& msg);
HttpResponse Fail(const Status& s);
// A query parameter that must be a non-negative integer (`def` when absent).
StatusOr<int64_t> QueryInt(const HttpRequest& req, const char* key, int64_t def);
// A query parameter that is 1/true or 0/false (`def` when absent).
StatusOr<bool> QueryBool(const HttpRequest& req, const char* key, bool def);
// A job as `caller` may see it: another user's job without its environment.
nlohmann::json Visible(nlohmann::json job, const Caller& caller);

}  // namespace tiresias::api
