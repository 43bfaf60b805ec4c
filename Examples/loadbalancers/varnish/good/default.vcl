# GOOD: Varnish behind hitch: hitch terminates TLS, Varnish passes every
# request to the server (through tap B's plain listener, which re-encrypts)
# and leaves every request and response as the server and the app sent them.
#
# Keeps: "both the request and response must remain unmodified".
#
# What Varnish's builtin VCL changes (measured through the taps), and the line
# that stops it:
#   X-Forwarded-For added (client.ip appended)  -> unset bereq.http.X-Forwarded-For
#   X-Varnish added to requests and responses   -> unset bereq.http.X-Varnish, unset resp.http.X-Varnish
#   Via added to requests and responses         -> unset bereq.http.Via, unset resp.http.Via
#   Age added to responses                      -> unset resp.http.Age
#   answers cached (the builtin caches GETs without Cookie/Authorization)
#                                               -> return (pass) in vcl_recv
# (unset bereq.http.X-Forwarded-For also drops one the app sent itself; an app
# behind no other proxy sends none.)
#
# The double-brace placeholders are filled by `intact scenario run`.
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

sub vcl_deliver {
    # What Varnish adds on the way back.
    unset resp.http.Via;
    unset resp.http.X-Varnish;
    unset resp.http.Age;
}
