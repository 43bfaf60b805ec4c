# BROKEN: Varnish removes the Cookie field from every request (unset
# req.http.Cookie in vcl_recv), the first line of countless caching VCLs.
# Otherwise transparent, as in ../good.
#
# Breaks: "needs authentication cookies": the session cookies never reach the
# server, and the sign-in cannot complete.
vcl 4.1;

# hitch (TLS) -> Varnish -> plain HTTP to tap B, which re-encrypts to the server.
backend appian {
    .host = "{{UPSTREAM_ADDRESS}}";
    .port = "{{UPSTREAM_PORT}}";
}

sub vcl_recv {
    # BROKEN: cookies removed from every request, so that answers can be cached.
    unset req.http.Cookie;
    return (pass);
}

sub vcl_backend_fetch {
    # What Varnish adds on the way to the server.
    unset bereq.http.X-Forwarded-For;
    unset bereq.http.X-Varnish;
    unset bereq.http.Via;
}

sub vcl_deliver {
    # What Varnish adds on the way back.
    unset resp.http.Via;
    unset resp.http.X-Varnish;
    unset resp.http.Age;
}
