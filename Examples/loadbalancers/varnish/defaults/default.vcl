# BROKEN: Varnish with only a backend: its builtin VCL runs. Measured through
# the taps: X-Forwarded-For and X-Varnish added to requests; X-Varnish, Via
# and Age added to responses (and Accept-Ranges to a cached one).
#
# Breaks: "both the request and response must remain unmodified".
# The fix: ../good (its unset lines and return (pass)).
vcl 4.1;

# hitch (TLS) -> Varnish -> plain HTTP to tap B, which re-encrypts to the server.
backend appian {
    .host = "{{UPSTREAM_ADDRESS}}";
    .port = "{{UPSTREAM_PORT}}";
}
# BROKEN: no vcl_recv, vcl_backend_fetch or vcl_deliver of its own.
