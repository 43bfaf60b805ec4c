# BROKEN: Varnish caches the REST API's answers for signed-in apps too, by URL
# alone (a rule "cache the API, the session cookie is not part of the key"),
# ignoring the server's Cache-Control: no-store. The first app's answer to its
# signed-in request is stored; the next app that asks for the same URL, with
# its own session cookie, gets a copy of it: one user's answer handed to
# another, and the server never hears of the request. Otherwise as ../good.
#
# Breaks: "Appian does not support any configuration in which Appian Mobile
# receives HTTP responses from a server other than an Appian server."
# The fix: ../good (return (pass): never answer from the cache); a cache must
# at least pass every request with a Cookie or Authorization (the builtin VCL does).
#
# The double-brace placeholders are filled by `intact scenario run`.
vcl 4.1;

# hitch (TLS) -> Varnish -> plain HTTP to tap B, which re-encrypts to the server.
backend appian {
    .host = "{{UPSTREAM_ADDRESS}}";
    .port = "{{UPSTREAM_PORT}}";
}

sub vcl_recv {
    # BROKEN: a signed-in app's API request is looked up in the cache by URL,
    # its Cookie kept for the server on a miss but not part of the key.
    if (req.url ~ "^/suite/rest/" && req.http.Cookie) {
        return (hash);
    }
    return (pass);
}

sub vcl_backend_fetch {
    unset bereq.http.X-Forwarded-For;
    unset bereq.http.X-Varnish;
    unset bereq.http.Via;
}

sub vcl_backend_response {
    # BROKEN: store the API's 200s for 30 s whatever the server's Cache-Control says.
    if (bereq.url ~ "^/suite/rest/" && beresp.status == 200) {
        set beresp.ttl = 30s;
        set beresp.uncacheable = false;
        return (deliver);
    }
}

sub vcl_deliver {
    unset resp.http.Via;
    unset resp.http.X-Varnish;
    unset resp.http.Age;
}
