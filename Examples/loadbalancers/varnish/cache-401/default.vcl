# BROKEN: Varnish caches the server's 401 (a CDN or cache rule that stores
# error answers, "cache 4xx for 30 s" to spare the origin), ignoring the
# server's Cache-Control: no-store. The first app gets the server's 401; the
# next app that asks for the same URL gets a copy of it, the first app's
# answer (its Intact-Trace echo names the first app's request), and the
# server never hears of it. Otherwise as ../good: nothing added or removed.
#
# Breaks: "Appian does not support any configuration in which Appian Mobile
# receives HTTP responses from a server other than an Appian server."
# The fix: ../good (return (pass): never answer from the cache), or drop the
# BROKEN lines so the server's no-store is honoured.
#
# The double-brace placeholders are filled by `intact scenario run`.
vcl 4.1;

# hitch (TLS) -> Varnish -> plain HTTP to tap B, which re-encrypts to the server.
backend appian {
    .host = "{{UPSTREAM_ADDRESS}}";
    .port = "{{UPSTREAM_PORT}}";
}

sub vcl_recv {
    # Only the REST API is cached (a rule "cache the API's answers"); the rest
    # passes. The builtin vcl_recv runs next for the API: it looks requests
    # up in the cache, except those with a Cookie or Authorization (a
    # signed-in app's).
    if (req.url !~ "^/suite/rest/") {
        return (pass);
    }
}

sub vcl_backend_fetch {
    unset bereq.http.X-Forwarded-For;
    unset bereq.http.X-Varnish;
    unset bereq.http.Via;
}

sub vcl_backend_response {
    # BROKEN: store the 401 for 30 s whatever the server's Cache-Control says.
    if (beresp.status == 401) {
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
