package toolkit

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of what one search looks at: a query is a few words, not a document.
const (
	maxQueryBytes  = 500
	maxQueryTokens = 32
	maxTokenBytes  = 40
)

// stopWords carry no meaning for finding a tool; dropping them keeps "turn on the light" about
// turning and lights.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"and": true, "or": true, "is": true, "it": true, "my": true, "me": true, "i": true, "with": true,
	"by": true, "at": true, "be": true, "this": true, "that": true, "from": true, "as": true,
	"all": true, "any": true, "some": true, "please": true, "can": true, "you": true, "how": true,
	"do": true, "does": true, "what": true, "which": true, "tool": true, "tools": true, "ha": true,
	"are": true, "was": true, "were": true, "did": true, "who": true, "there": true, "have": true, "has": true,
	"called": true, "named": true, // "an area called office": a name follows, nothing is called
}

// tokenize splits text into search terms: lower-case runs of letters and digits (underscores,
// dots and dashes separate, so ha_read_file is "read" and "file"), stop words dropped, each
// reduced by stem. It never returns an empty term.
func tokenize(text string) []string {
	var out []string
	appendTerms(&out, text, -1)
	return out
}

// queryTerms is tokenize for a model's query: bounded in bytes and terms, duplicates dropped
// (BM25 weighs a term once per query).
func queryTerms(q string) []string {
	if len(q) > maxQueryBytes {
		q = q[:maxQueryBytes]
		for !utf8.ValidString(q) { // do not cut a rune in half
			q = q[:len(q)-1]
		}
	}
	var terms []string
	appendTerms(&terms, q, maxQueryTokens)
	seen := map[string]bool{}
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func appendTerms(out *[]string, text string, max int) {
	add := func(f string) bool {
		if max >= 0 && len(*out) >= max {
			return false
		}
		f = strings.ToLower(f)
		if len(f) <= maxTokenBytes && !stopWords[f] {
			*out = append(*out, stem(f))
		}
		return true
	}
	// Words joined by hyphens count apart and together: "add-on" meets both "add" and "addons".
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return r != '-' && !isWordRune(r) }) {
		parts := strings.FieldsFunc(word, func(r rune) bool { return r == '-' })
		for _, p := range parts {
			if !add(p) {
				return
			}
		}
		if len(parts) > 1 && !add(strings.Join(parts, "")) {
			return
		}
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// stem strips the common English endings so that "lights", "reading" and "entities" meet "light",
// "read" and "entity". It is deliberately light (no dictionary): the same function runs over the
// tools and the query, so a crude stem still matches itself.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:n-1]
	}
	return dropE(w)
}

// dropE drops a final e, so that "delete" meets "deleted" (delet) and "creates" "creating".
func dropE(w string) string {
	if n := len(w); n > 4 && w[n-1] == 'e' && w[n-2] != 'e' {
		return w[:n-1]
	}
	return w
}

// undouble turns "runn" (from running) into "run" and "stopp" into "stop".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && w[n-1] != 'l' && w[n-1] != 's' && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// The words of a request that say what it wants done. A request that changes nothing is a read:
// reading tools go first for it and destructive ones last. One that acts on a device brings in the
// words of calling a service. Lists of plain English, matched after stem like every term.
var (
	destroyWords = stemSet("delete", "remove", "purge", "drop", "wipe", "erase", "clear", "destroy", "reset",
		"restart", "reboot", "shutdown", "uninstall", "kill", "truncate", "trash", "discard", "prune", "overwrite", "forget")
	// controlWords act on a device: "turn on the light", "open the blinds".
	controlWords = stemSet("turn", "switch", "set", "start", "stop", "lock", "unlock", "open", "close", "arm",
		"disarm", "activate", "deactivate", "toggle", "dim", "brighten", "play", "pause", "resume", "mute", "raise",
		"lower", "increase", "decrease", "heat", "cool")
	// configWords change how the home is set up: "rename the lamp", "create a scene with the lights".
	configWords = stemSet("backup", "create", "add", "make", "new", "change", "edit", "modify", "update", "rename",
		"write", "install", "enable", "disable", "run", "trigger", "call", "send", "move", "import", "apply", "fire",
		"reload", "restore", "upgrade", "assign", "subscribe", "say", "announce", "notify", "schedule", "book", "save",
		"undo", "revert", "download", "put", "configure", "hide", "unhide", "repair", "follow", "watch")
	// leadAskWords make a request a question when they open it, whatever verb follows: "is the door
	// open", "which updates are available", "show the trace".
	leadAskWords = stemSet("why", "did", "was", "were", "who", "when", "where", "which", "what", "whats", "is", "are",
		"show", "list", "get", "read", "find", "search", "check", "view", "see", "look")
	// pastAskWords make it a question anywhere: "why did my automation not run", "who turned on the light".
	pastAskWords = stemSet("why", "did", "didnt", "was", "wasnt", "were", "happened", "who")
)

// intent is what a request wants done, read from its words.
type intent struct {
	destroy   bool // it names a destruction: delete, purge, restart…
	configure bool // it changes how the home is set up (destroy included)
	control   bool // it acts on a device
	change    bool // any of them
}

// controls reports a request that only acts on devices: "turn on the light", not "create a scene
// that turns on the light".
func (i intent) controls() bool { return i.control && !i.configure }

// read reports a request that changes nothing: it wants a tool that reads.
func (i intent) read() bool { return !i.change }

// intentOf reads a request's intent from its rawWords: a question (a first word like "is" or
// "which", or a question about the past anywhere) reads; otherwise its verbs say.
func intentOf(words []string) intent {
	var in intent
	for i, w := range words {
		switch {
		case i == 0 && leadAskWords[w], pastAskWords[w]:
			return intent{}
		case destroyWords[w]:
			in.destroy, in.configure = true, true
		case configWords[w]:
			in.configure = true
		case controlWords[w]:
			in.control = true
		}
	}
	in.change = in.configure || in.control
	return in
}

// rawWords are a request's words lower-cased and stemmed, stop words kept: "is" and "which" are
// stop words for matching but say that the request is a question.
func rawWords(q string) []string {
	if len(q) > maxQueryBytes {
		q = q[:maxQueryBytes]
	}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !isWordRune(r) && r != '\'' }) {
		w = strings.ReplaceAll(strings.Trim(w, "'"), "'", "")
		if w != "" && len(w) <= maxTokenBytes && len(out) < maxQueryTokens {
			out = append(out, stem(w))
		}
	}
	return out
}

func stemSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[stem(w)] = true
	}
	return m
}

// relatedWeight is how much a related term counts next to a word the request says.
const relatedWeight = 0.5

// thesaurus: the words people use for their home, and the words the tools say the same with. Each
// entry's words bring in its related terms at relatedWeight: "lamp" finds what "light" does,
// "yesterday" what "history" does. One level only: related terms relate nothing further.
var thesaurus = buildThesaurus([][2]string{
	{"lamp bulb", "light"},
	{"blind shade curtain shutter awning", "cover"},
	{"garage gate", "cover door"},
	{"thermostat heating heater hvac aircon radiator", "climate temperature"},
	{"degree", "temperature"},
	{"tv television speaker music song radio podcast playlist volume track", "media player"},
	{"play pause skip", "media player"},
	{"plug outlet socket", "switch"},
	{"lock", "unlock"},
	{"unlock", "lock"},
	{"yesterday past ago earlier trend graph chart weekly monthly", "history statistic"},
	{"temperature humidity pressure power consumption usage measurement average mean minimum maximum", "statistic sensor"},
	{"solar electricity grid kwh consumption", "energy"},
	{"why fail broken wrong problem", "trace diagnostic log error"},
	{"debug", "trace log"},
	{"troubleshoot", "diagnostic"},
	{"rename", "name update"},
	{"change edit modify alter adjust", "update"},
	{"edit", "write"},
	{"configuration", "config"},
	{"config", "configuration"},
	{"assist voice", "conversation"},
	{"today tomorrow tonight weekend", "event period"},
	{"recover undelete bring", "restore"},
	{"recently lately hour", "recent"},
	{"icon alias", "entity name"},
	{"hide unhide", "hidden entity"},
	{"toggle counter timer dropdown slider", "helper input"},
	{"card lovelace view panel", "dashboard"},
	{"room", "area"},
	{"tag", "label"},
	{"snapshot", "backup camera"},
	{"picture photo image", "camera snapshot"},
	{"upgrade firmware", "update"},
	{"undo revert rollback previous", "version history restore"},
	{"appointment meeting", "calendar event"},
	{"notify alert message text", "notification"},
	{"people person everyone anybody somebody someone family", "person location"},
	{"action", "service"},
	{"service", "action"},
	{"sql db", "database recorder"},
	{"jinja", "template"},
	{"folder", "directory file"},
	{"space storage", "disk"},
	{"routine", "script automation"},
	{"rule", "automation"},
	{"mood", "scene"},
	{"grocery groceries", "shopping list"},
	{"task chore", "todo"},
	{"live realtime", "subscribe event"},
})

// askRelated: what a question word asks for. "Who turned on the light" asks for a cause, which the
// logbook records; "why did it not run" for a cause too, which a trace shows. Question words are
// stop words for matching, so they come in only this way.
var askRelated = map[string][]string{
	"who":      tokenize("cause logbook person"),
	"why":      tokenize("cause trace"),
	"happened": tokenize("logbook activity"),
}

// deviceWords are things in the house. A request about one is about its entity when it reads
// ("is the door open") and about controlling the device when it changes ("open the door").
var deviceWords = stemSet("light", "lamp", "bulb", "switch", "plug", "outlet", "socket", "lock", "door", "window",
	"garage", "gate", "blind", "shade", "curtain", "shutter", "awning", "cover", "fan", "heater", "heating",
	"thermostat", "climate", "hvac", "aircon", "radiator", "vacuum", "robot", "mower", "tv", "television",
	"speaker", "valve", "sprinkler", "siren", "doorbell", "kettle", "oven", "dishwasher", "washer", "dryer",
	"sensor", "alarm")

var (
	deviceRead   = tokenize("entity state")
	deviceChange = tokenize("call service device")
)

func buildThesaurus(entries [][2]string) map[string][]string {
	out := map[string][]string{}
	for _, e := range entries {
		related := tokenize(e[1])
		for _, w := range strings.Fields(e[0]) {
			w = stem(w)
			for _, r := range related {
				if r != w && !slices.Contains(out[w], r) {
					out[w] = append(out[w], r)
				}
			}
		}
	}
	return out
}

// weightedTerm is a query term and how much it counts.
type weightedTerm struct {
	term   string
	weight float64
}

// expand gives a request's terms their related terms: from the thesaurus, from its question words
// (words: rawWords), and for a thing in the house the words of reading its entity or of
// controlling it, as in says (none when the request sets something up with it). A term the request says
// itself always counts in full.
func expand(terms []string, words []string, in intent) []weightedTerm {
	out := make([]weightedTerm, 0, len(terms))
	seen := map[string]int{}
	add := func(t string, w float64) {
		if i, ok := seen[t]; ok {
			out[i].weight = max(out[i].weight, w)
			return
		}
		seen[t] = len(out)
		out = append(out, weightedTerm{t, w})
	}
	for _, t := range terms {
		add(t, 1)
	}
	for _, w := range words {
		for _, r := range askRelated[w] {
			add(r, relatedWeight)
		}
	}
	for _, t := range terms {
		for _, r := range thesaurus[t] {
			add(r, relatedWeight)
		}
		var related []string
		switch {
		case !deviceWords[t]:
		case in.read():
			related = deviceRead
		case in.controls():
			related = deviceChange
		}
		for _, r := range related {
			add(r, relatedWeight)
		}
	}
	return out
}
