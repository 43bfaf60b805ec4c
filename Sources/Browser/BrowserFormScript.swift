import Codecs
import Foundation

/// The script that fills the sign-in form as a person would: it picks the
/// form with a password field (else the first form), finds the password
/// field by type and the user-name field by type and name (`user`, `login`,
/// `email`, `un`, else the first text field), types into each (value, then
/// `input` and `change` events), and, when both are there, presses the
/// form's submit button (or submits the form). It returns, as JSON text,
/// what it found: `{"forms":N,"fields":["name:type",…],"user":…,
/// "password":…,"submitted":…,"title":…}`.
enum BrowserFormScript {
    static func source(username: String, password: String) -> String {
        """
        (() => {
          const report = {forms: document.forms.length, fields: [], user: null, password: null, submitted: false, title: document.title || ""};
          const forms = Array.from(document.forms);
          const form = forms.find(f => f.querySelector("input[type=password]")) || forms[0];
          if (!form) return JSON.stringify(report);
          const inputs = Array.from(form.elements).filter(e => e.tagName === "INPUT" || e.tagName === "TEXTAREA");
          report.fields = inputs.map(e => (e.name || e.id || "(unnamed)") + ":" + (e.type || "text"));
          const named = e => e.name || e.id || "(unnamed)";
          const password = inputs.find(e => e.type === "password");
          const textual = inputs.filter(e => ["text", "email", "tel", "textarea"].includes(e.type));
          const user = textual.find(e => /user|login|email|^un$/i.test(e.name + " " + e.id + " " + e.autocomplete)) || textual[0];
          const type = (e, v) => { e.focus(); e.value = v; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); };
          if (user) { type(user, \(literal(username))); report.user = named(user); }
          if (password) { type(password, \(literal(password))); report.password = named(password); }
          if (user && password) {
            const button = form.querySelector("button[type=submit], input[type=submit], button:not([type])");
            if (button) button.click(); else if (form.requestSubmit) form.requestSubmit(); else form.submit();
            report.submitted = true;
          }
          return JSON.stringify(report);
        })()
        """
    }

    /// A JavaScript string literal: a JSON string (`JSONWriter`), with the
    /// two line separators JSON allows and old JavaScript did not escaped.
    static func literal(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 8)
        writer.string(text)
        return String(decoding: writer.bytes, as: UTF8.self)
            .replacingOccurrences(of: "\u{2028}", with: "\\u2028")
            .replacingOccurrences(of: "\u{2029}", with: "\\u2029")
    }
}
