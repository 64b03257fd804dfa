package approval

// templates extend the OAuth login pages ("head", "error"), so both look the same.
const templates = `
{{define "approval"}}{{template "head" "Permission request"}}
{{if .Once}}<h1>Confirm this action, once?</h1>{{else}}<h1>Allow the {{.Req.Category}} permission for this session?</h1>{{end}}
<p>You are signed in to Home Assistant as <b>{{.User}}</b>.</p>
<dl>
<dt>Assistant</dt><dd id="client">{{if .Req.Client}}{{.Req.Client}}{{else}}(no name given){{end}}{{if .Req.SignIn}}, {{.Req.SignIn}}{{end}}, {{.Req.Session}}</dd>
<dt>Wants to run</dt><dd><code id="tool">{{.Req.Tool}}</code></dd>
{{if .Summary}}<dt>With</dt><dd><code id="args">{{.Summary}}</code></dd>{{end}}
{{if .Once}}<dt>Approves</dt><dd id="category">this one action, once; it grants nothing else</dd>{{else}}<dt>Permission</dt><dd id="category">{{.Req.Category}}, for this session only, until it ends or you revoke it in the hamcp panel</dd>{{end}}
<dt>Request</dt><dd><code>{{.Req.ID}}</code>, open until {{.Expires}}</dd>
</dl>
<p class="warn" id="warning">{{.Req.Warning}}</p>
<p>Approve only if you asked the assistant for this yourself. {{if .Once}}Deny refuses this action for the rest of that session.{{else}}Deny blocks the permission for the rest of that session.{{end}}</p>
<form method="post" action="/approve/request">
<input type="hidden" name="v" value="{{.Visit}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons">
<button class="allow" type="submit" name="action" value="approve">{{if .Once}}Approve once{{else}}Approve{{end}}</button>
<button type="submit" name="action" value="deny">Deny</button>
</div>
</form>
</main></body></html>{{end}}

{{define "done"}}{{template "head" .Title}}
<h1 id="result">{{.Title}}</h1>
<p>{{.Message}}</p>
<p>You can close this page.</p>
</main></body></html>{{end}}
`
