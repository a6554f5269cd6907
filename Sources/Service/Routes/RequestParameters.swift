import Feeds
import HTTPServer
import Primitives

/// A request's parameters: a GET's query, or a POST's `application/x-www-form-urlencoded`
/// body (what a proxy's 8 KB request line cannot carry: a library of 500 podcasts). Another
/// body type is `415 unsupported_media_type`.
enum RequestParameters {
    static func of(_ request: Request) throws(ClientError) -> [(name: String, value: String)] {
        guard request.method == "POST" else { return request.queryItems }
        guard let type = request.headers["content-type"], MediaType.essence(type) == "application/x-www-form-urlencoded" else {
            throw ClientError(
                status: 415, code: "unsupported_media_type", message: "send the parameters as application/x-www-form-urlencoded (as a query would be)")
        }
        return request.formItems
    }
}
