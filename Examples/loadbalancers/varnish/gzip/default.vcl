# BROKEN: Varnish compresses the server's answers (set beresp.do_gzip =
# true in vcl_backend_response, as bandwidth-saving VCLs do). Otherwise
# transparent, as in ../good.
#
# Breaks: "both the request and response must remain unmodified".
vcl 4.1;

# hitch (TLS) -> Varnish -> plain HTTP to tap B, which re-encrypts to the server.
backend appian {
    .host = "{{UPSTREAM_ADDRESS}}";
    .port = "{{UPSTREAM_PORT}}";
}

sub vcl_recv {
    # Never answer from the cache: every request goes to the server.
    return (pass);
}

sub vcl_backend_fetch {
    # What Varnish adds on the way to the server.
    unset bereq.http.X-Forwarded-For;
    unset bereq.http.X-Varnish;
    unset bereq.http.Via;
}

sub vcl_backend_response {
    # BROKEN: Varnish gzips what it fetched, for clients that accept gzip.
    set beresp.do_gzip = true;
}

sub vcl_deliver {
    # What Varnish adds on the way back.
    unset resp.http.Via;
    unset resp.http.X-Varnish;
    unset resp.http.Age;
}
