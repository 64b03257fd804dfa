package approval

// templates extend the OAuth login pages ("head", "error"), so both look the same.
const templates = `
{{define "approval"}}{{template "head" "Permission request"}}
{{if eq (print .Req.Category) "confirm"}}<h1>Confirm this action?</h1>{{else}}<h1>Allow the {{.Req.Category}} permission?</h1>{{end}}
<p>You are signed in to Home Assistant as <b>{{.User}}</b>.</p>
<dl>
<dt>Assistant</dt><dd id="client">{{if .Req.Client}}{{.Req.Client}}{{else}}(no name given){{end}}, {{.Req.Session}}</dd>
<dt>Wants to run</dt><dd><code id="tool">{{.Req.Tool}}</code></dd>
{{if .Req.ArgsSummary}}<dt>With</dt><dd><code id="args">{{.Req.ArgsSummary}}</code></dd>{{end}}
{{if eq (print .Req.Category) "confirm"}}<dt>Approves</dt><dd id="category">this one call, once</dd>{{else}}<dt>Permission</dt><dd id="category">{{.Req.Category}}, for this session only</dd>{{end}}
<dt>Request</dt><dd><code>{{.Req.ID}}</code>, open until {{.Expires}}</dd>
</dl>
<p class="warn" id="warning">{{.Req.Warning}}</p>
<p>Approve only if you asked the assistant for this yourself. {{if eq (print .Req.Category) "confirm"}}Deny refuses this call for the rest of that session.{{else}}Deny blocks the permission for the rest of that session.{{end}}</p>
<form method="post" action="/approve/request">
<input type="hidden" name="v" value="{{.Visit}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons">
<button class="allow" type="submit" name="action" value="approve">Approve</button>
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
