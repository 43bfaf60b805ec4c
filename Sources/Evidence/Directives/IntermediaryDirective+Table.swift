/// The table, per product, as measured through the taps (Debian bookworm's
/// packages: Apache 2.4, Caddy 2.6, Traffic Server 9.2, Varnish 7.1,
/// nghttpx 1.52, Squid 5.7, nginx 1.22, HAProxy 2.6). Each row's
/// `verifiedBy` scenario shows the change; `IntermediaryScenarioTests`
/// checks that every row matches a difference of that scenario's run.
extension IntermediaryDirective {
    public static let table: [IntermediaryDirective] = apache + caddy + trafficServer + varnish + nghttpx + squid + nginx
        + haproxy

    static let apache: [IntermediaryDirective] = [
        .init("apache", .hostChanged, cause: "Apache httpd ProxyPreserveHost Off (the default) sends the upstream's address",
              fix: "ProxyPreserveHost On", verifiedBy: "apache/defaults"),
        .init("apache", .field(.request, .fieldAdded, "x-forwarded-for"), cause: "Apache httpd ProxyAddHeaders On (the default)",
              fix: "ProxyAddHeaders Off", verifiedBy: "apache/defaults"),
        .init("apache", .field(.request, .fieldAdded, "x-forwarded-host"), cause: "Apache httpd ProxyAddHeaders On (the default)",
              fix: "ProxyAddHeaders Off", verifiedBy: "apache/defaults"),
        .init("apache", .field(.request, .fieldAdded, "x-forwarded-server"), cause: "Apache httpd ProxyAddHeaders On (the default)",
              fix: "ProxyAddHeaders Off", verifiedBy: "apache/defaults"),
        .init("apache", .field(.response, .fieldChanged, "content-type"),
              cause: "Apache httpd ProxyErrorOverride On replaces the server's error answers with its own pages",
              fix: "ProxyErrorOverride Off (the default), at least for the app's paths", verifiedBy: "apache/error-override"),
        .init("apache", .field(.response, .fieldAdded, "content-encoding"),
              cause: "Apache httpd mod_deflate (AddOutputFilterByType DEFLATE, Debian's deflate.conf)",
              fix: "no DEFLATE filter for the app's paths (a2dismod deflate, or SetEnv no-gzip 1 in their <Location>)",
              verifiedBy: "apache/deflate"),
    ]

    static let caddy: [IntermediaryDirective] = [
        .init("caddy", .field(.request, .fieldAdded, "x-forwarded-for"), cause: "Caddy reverse_proxy adds it by default",
              fix: "header_up -X-Forwarded-For", verifiedBy: "caddy/defaults"),
        .init("caddy", .field(.request, .fieldAdded, "x-forwarded-proto"), cause: "Caddy reverse_proxy adds it by default",
              fix: "header_up -X-Forwarded-Proto", verifiedBy: "caddy/defaults"),
        .init("caddy", .field(.request, .fieldAdded, "x-forwarded-host"), cause: "Caddy reverse_proxy adds it by default",
              fix: "header_up -X-Forwarded-Host", verifiedBy: "caddy/defaults"),
        .init("caddy", .field(.response, .fieldAdded, "alt-svc"), cause: "Caddy offers HTTP/3 by default and announces it",
              fix: "global option servers { protocols h1 h2 }", verifiedBy: "caddy/defaults"),
        .init("caddy", .field(.response, .fieldChanged, "server"), cause: "Caddy puts its own Server: Caddy before the server's",
              fix: "a headers handler deleting Server that is not deferred, before reverse_proxy (Caddy's JSON; the "
                + "Caddyfile's header -Server is always deferred and removes the server's too): see "
                + "Examples/loadbalancers/caddy/good", verifiedBy: "caddy/defaults"),
        .init("caddy", .field(.response, .fieldAdded, "content-encoding"), cause: "Caddy encode gzip",
              fix: "no encode directive for the app's paths", verifiedBy: "caddy/encode-gzip"),
        .init("caddy", .cookieAttribute("Path changed"), cause: "Caddy header_down Set-Cookie rewrites the cookie",
              fix: "no header_down Set-Cookie", verifiedBy: "caddy/cookie-path"),
    ]

    static let trafficServer: [IntermediaryDirective] = [
        .init("trafficserver", .hostChanged, cause: "Traffic Server proxy.config.url_remap.pristine_host_hdr 0 (the default)",
              fix: "CONFIG proxy.config.url_remap.pristine_host_hdr INT 1", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.request, .fieldAdded, "via"), cause: "Traffic Server proxy.config.http.insert_request_via_str 1",
              fix: "CONFIG proxy.config.http.insert_request_via_str INT 0", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.request, .fieldAdded, "x-forwarded-for"),
              cause: "Traffic Server proxy.config.http.insert_squid_x_forwarded_for 1 (Debian's records.config)",
              fix: "CONFIG proxy.config.http.insert_squid_x_forwarded_for INT 0", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.request, .fieldAdded, "client-ip"), cause: "Traffic Server proxy.config.http.insert_client_ip 1",
              fix: "CONFIG proxy.config.http.insert_client_ip INT 0", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.response, .fieldChanged, "server"),
              cause: "Traffic Server proxy.config.http.response_server_enabled 1 (the default) replaces Server",
              fix: "CONFIG proxy.config.http.response_server_enabled INT 0", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.response, .fieldAdded, "age"), cause: "Traffic Server proxy.config.http.insert_age_in_response 1",
              fix: "CONFIG proxy.config.http.insert_age_in_response INT 0", verifiedBy: "trafficserver/defaults"),
        .init("trafficserver", .field(.request, .fieldChanged, "accept-encoding"),
              cause: "Traffic Server proxy.config.http.normalize_ae 1 (Debian's records.config)",
              fix: "CONFIG proxy.config.http.normalize_ae INT 0", verifiedBy: "trafficserver/normalize-accept-encoding"),
        .init("trafficserver", .field(.response, .fieldRemoved, "set-cookie"),
              cause: "a Traffic Server header_rewrite rule (rm-header Set-Cookie)",
              fix: "remove the rule from the header_rewrite configuration in plugin.config", verifiedBy: "trafficserver/strip-set-cookie"),
    ]

    static let varnish: [IntermediaryDirective] = [
        .init("varnish", .field(.request, .fieldAdded, "x-forwarded-for"), cause: "Varnish appends client.ip to X-Forwarded-For",
              fix: "unset bereq.http.X-Forwarded-For in vcl_backend_fetch", verifiedBy: "varnish/defaults"),
        .init("varnish", .field(.request, .fieldAdded, "x-varnish"), cause: "Varnish adds X-Varnish to backend requests",
              fix: "unset bereq.http.X-Varnish in vcl_backend_fetch", verifiedBy: "varnish/defaults"),
        .init("varnish", .field(.response, .fieldAdded, "via"), cause: "Varnish's builtin VCL",
              fix: "unset resp.http.Via in vcl_deliver", verifiedBy: "varnish/defaults"),
        .init("varnish", .field(.response, .fieldAdded, "x-varnish"), cause: "Varnish's builtin VCL",
              fix: "unset resp.http.X-Varnish in vcl_deliver", verifiedBy: "varnish/defaults"),
        .init("varnish", .field(.response, .fieldAdded, "age"), cause: "Varnish's builtin VCL",
              fix: "unset resp.http.Age in vcl_deliver", verifiedBy: "varnish/defaults"),
        .init("varnish", .field(.request, .fieldRemoved, "cookie"), cause: "unset req.http.Cookie in vcl_recv (a caching VCL)",
              fix: "keep the app's Cookie: return (pass) for the app's paths before any unset", verifiedBy: "varnish/strip-cookies"),
        .init("varnish", .field(.response, .fieldAdded, "content-encoding"), cause: "set beresp.do_gzip = true in vcl_backend_response",
              fix: "no do_gzip for the app's paths", verifiedBy: "varnish/gzip"),
    ]

    static let nghttpx: [IntermediaryDirective] = [
        .init("nghttpx", .field(.request, .fieldAdded, "via"), cause: "nghttpx appends to Via by default",
              fix: "no-via=yes", verifiedBy: "nghttpx/defaults"),
        .init("nghttpx", .field(.response, .fieldAdded, "via"), cause: "nghttpx appends to Via by default",
              fix: "no-via=yes", verifiedBy: "nghttpx/defaults"),
        .init("nghttpx", .field(.request, .fieldAdded, "x-forwarded-proto"), cause: "nghttpx adds X-Forwarded-Proto by default",
              fix: "no-add-x-forwarded-proto=yes", verifiedBy: "nghttpx/defaults"),
        .init("nghttpx", .field(.response, .fieldChanged, "server"), cause: "nghttpx rewrites Server by default",
              fix: "no-server-rewrite=yes", verifiedBy: "nghttpx/defaults"),
        .init("nghttpx", .field(.request, .fieldAdded, "forwarded"), cause: "nghttpx add-forwarded",
              fix: "no add-forwarded line", verifiedBy: "nghttpx/add-forwarded"),
        .init("nghttpx", .field(.request, .fieldAdded, "x-forwarded-for"), cause: "nghttpx add-x-forwarded-for=yes",
              fix: "no add-x-forwarded-for line", verifiedBy: "nghttpx/add-forwarded"),
        .init("nghttpx", .field(.response, .fieldAdded, "strict-transport-security"), cause: "nghttpx add-response-header",
              fix: "no add-response-header line (let the server send its own)", verifiedBy: "nghttpx/hsts"),
    ]

    static let squid: [IntermediaryDirective] = [
        .init("squid", .field(.request, .fieldAdded, "via"), cause: "Squid via on (the default)",
              fix: "via off", verifiedBy: "squid/defaults"),
        .init("squid", .field(.response, .fieldAdded, "via"), cause: "Squid via on (the default)",
              fix: "via off", verifiedBy: "squid/defaults"),
        .init("squid", .field(.request, .fieldAdded, "x-forwarded-for"), cause: "Squid forwarded_for on (the default)",
              fix: "forwarded_for transparent", verifiedBy: "squid/defaults"),
        .init("squid", .field(.request, .fieldAdded, "cache-control"),
              cause: "Squid adds its refresh_pattern maximum as max-age to requests without one",
              fix: "request_header_access Cache-Control deny all (it removes any Cache-Control the app sends, too)",
              verifiedBy: "squid/defaults"),
        .init("squid", .field(.response, .fieldAdded, "x-cache"), cause: "Squid adds X-Cache to every answer",
              fix: "reply_header_access X-Cache deny all", verifiedBy: "squid/defaults"),
        .init("squid", .field(.response, .fieldAdded, "x-cache-lookup"), cause: "Squid adds X-Cache-Lookup to every answer",
              fix: "reply_header_access X-Cache-Lookup deny all", verifiedBy: "squid/defaults"),
        .init("squid", .statusReplacedWith(field: "x-squid-error"),
              cause: "Squid answered with its own error page (X-Squid-Error names which: ERR_TOO_BIG is reply_body_max_size)",
              fix: "exempt the server from the limit or the rule Squid's error names (reply_body_max_size, http_access)",
              verifiedBy: "squid/reply-body-limit"),
    ]

    static let nginx: [IntermediaryDirective] = [
        .init("nginx", .field(.response, .fieldRemoved, "set-cookie"), cause: "nginx proxy_hide_header Set-Cookie",
              fix: "no proxy_hide_header Set-Cookie", verifiedBy: "nginx/hide-set-cookie"),
        .init("nginx", .cookieAttribute("Path changed"), cause: "nginx proxy_cookie_path",
              fix: "no proxy_cookie_path", verifiedBy: "nginx/proxy-cookie-path"),
    ]

    static let haproxy: [IntermediaryDirective] = [
        .init("haproxy", .field(.response, .fieldAdded, "content-encoding"), cause: "HAProxy compression algo / compression type",
              fix: "no compression for the app's content types", verifiedBy: "haproxy/compression"),
    ]
}
