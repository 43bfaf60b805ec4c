# TOLERATED: Varnish passes every request to the server (no cache) but keeps
# the fields its builtin VCL adds, measured through the taps: X-Forwarded-For
# and X-Varnish on requests; Via, X-Varnish and Age on responses.
# Examples/policies/varnish-forwarding.json tolerates exactly those (still
# listed in the report); under the strict policy this is ../defaults' breach.
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
