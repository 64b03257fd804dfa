package hatools

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hamcp/hamcp/src/homeassistant"
	"github.com/hamcp/hamcp/src/toolkit"
)

// SetOrganisation is the toolset of the area, label and device registries.
const SetOrganisation = "organisation"

// registry is one read of HA's area, floor, label, device and entity registries (WebSocket
// only; REST has none of them), indexed for the filters tools apply.
type registry struct {
	areas    []*homeassistant.Area
	floors   map[string]homeassistant.Floor
	labels   []*homeassistant.Label
	devices  []*homeassistant.Device
	deviceBy map[string]*homeassistant.Device
	entities map[string]*homeassistant.DisplayEntity
}

func strOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// areaOf is the entity's own area, else its device's (HA's rule).
func (r *registry) areaOf(entityID string) string {
	e := r.entities[entityID]
	if e == nil {
		return ""
	}
	if e.AreaID != "" {
		return e.AreaID
	}
	if d := r.deviceBy[e.DeviceID]; d != nil {
		return strOf(d.AreaID)
	}
	return ""
}

func (r *registry) area(id string) *homeassistant.Area {
	for _, a := range r.areas {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// findArea matches an area by id, name or alias, ignoring case.
func (r *registry) findArea(ref string) *homeassistant.Area {
	if a := r.area(ref); a != nil {
		return a
	}
	for _, a := range r.areas {
		if strings.EqualFold(a.Name, ref) || slices.ContainsFunc(a.Aliases, func(s string) bool { return strings.EqualFold(s, ref) }) {
			return a
		}
	}
	return nil
}

func (r *registry) findLabel(ref string) *homeassistant.Label {
	for _, l := range r.labels {
		if l.ID == ref || strings.EqualFold(l.Name, ref) {
			return l
		}
	}
	return nil
}

func (r *registry) areaName(id string) string {
	if a := r.area(id); a != nil {
		return a.Name
	}
	return ""
}

func (r *registry) floorName(a *homeassistant.Area) string {
	if a == nil || a.FloorID == nil {
		return ""
	}
	return r.floors[*a.FloorID].Name
}

func (r *registry) hasLabel(entityID, labelID string) bool {
	e := r.entities[entityID]
	return e != nil && slices.Contains(e.Labels, labelID)
}

// areaNotFound names the areas there are, so the model can retry without another call.
func (r *registry) areaNotFound(field, ref string) error {
	names := make([]string, 0, len(r.areas))
	for _, a := range r.areas {
		names = append(names, a.ID)
	}
	return toolkit.InvalidArg(field, "is not an area of this home (got "+ref+"); areas: "+strings.Join(names, ", "), "")
}

func (r *registry) labelNotFound(field, ref string) error {
	names := make([]string, 0, len(r.labels))
	for _, l := range r.labels {
		names = append(names, l.ID)
	}
	return toolkit.InvalidArg(field, "is not a label of this home (got "+ref+"); labels: "+strings.Join(names, ", "), "")
}

// fetchRegistry reads the five registries at once: they are independent commands on one
// connection, and the slowest decides how long a first search waits.
func fetchRegistry(ctx context.Context, ha *homeassistant.Client) (*registry, error) {
	var (
		areas    []homeassistant.Area
		floors   []homeassistant.Floor
		labels   []homeassistant.Label
		devices  []homeassistant.Device
		entities []homeassistant.DisplayEntity
	)
	reads := []func() error{
		func() (err error) { areas, err = ha.Areas(ctx); return err },
		func() (err error) { floors, err = ha.Floors(ctx); return err },
		func() (err error) { labels, err = ha.Labels(ctx); return err },
		func() (err error) { devices, err = ha.Devices(ctx); return err },
		func() (err error) { entities, err = ha.DisplayEntities(ctx); return err },
	}
	errs := make([]error, len(reads))
	var wg sync.WaitGroup
	for i, read := range reads {
		wg.Go(func() { errs[i] = read() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	r := &registry{areas: pointers(areas), labels: pointers(labels), devices: pointers(devices), floors: map[string]homeassistant.Floor{},
		deviceBy: make(map[string]*homeassistant.Device, len(devices)), entities: make(map[string]*homeassistant.DisplayEntity, len(entities))}
	for _, f := range floors {
		r.floors[f.ID] = f
	}
	for _, d := range r.devices {
		r.deviceBy[d.ID] = d
	}
	for i := range entities {
		r.entities[entities[i].EntityID] = &entities[i]
	}
	return r, nil
}

// pointers lets the registry hand out rows that tools and confirmations share without copying.
func pointers[T any](rows []T) []*T {
	out := make([]*T, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}

// registryTTL bounds staleness when an update event was missed (e.g. across a reconnect).
const registryTTL = time.Minute

// registryCache keeps the last registry read per Home Assistant client, dropped when HA
// announces a registry change.
type registryCache struct {
	ha       *homeassistant.Client
	mu       sync.Mutex
	cur      *registry
	at       time.Time
	gen      uint64
	watching bool
	loading  sync.Mutex
}

var registryCaches sync.Map // *homeassistant.Client → *registryCache

func registryOf(ha *homeassistant.Client) *registryCache {
	if rc, ok := registryCaches.Load(ha); ok {
		return rc.(*registryCache)
	}
	rc, _ := registryCaches.LoadOrStore(ha, &registryCache{ha: ha})
	return rc.(*registryCache)
}

var registryEvents = []string{"area_registry_updated", "floor_registry_updated", "label_registry_updated",
	"device_registry_updated", "entity_registry_updated"}

func (rc *registryCache) fresh() *registry {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.cur != nil && !rc.at.IsZero() && time.Since(rc.at) < registryTTL {
		return rc.cur
	}
	return nil
}

func (rc *registryCache) invalidate() {
	rc.mu.Lock()
	rc.gen++
	rc.at = time.Time{}
	rc.mu.Unlock()
}

// get returns a fresh registry, reading it from HA when needed. When HA cannot be read, a
// registry read earlier is still better than nothing: registries change rarely.
func (rc *registryCache) get(ctx context.Context) (*registry, error) {
	if r := rc.fresh(); r != nil {
		return r, nil
	}
	rc.loading.Lock()
	defer rc.loading.Unlock()
	if r := rc.fresh(); r != nil {
		return r, nil
	}
	rc.watch(ctx)
	rc.mu.Lock()
	gen := rc.gen
	rc.mu.Unlock()
	r, err := fetchRegistry(ctx, rc.ha)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		if rc.cur != nil {
			return rc.cur, nil
		}
		return nil, err
	}
	rc.cur = r
	if gen == rc.gen { // no update arrived while reading; otherwise read again next time
		rc.at = time.Now()
	}
	return r, nil
}

// watch subscribes to registry updates once; a failure leaves the TTL in charge and is retried
// on the next read.
func (rc *registryCache) watch(ctx context.Context) {
	rc.mu.Lock()
	if rc.watching {
		rc.mu.Unlock()
		return
	}
	rc.watching = true
	rc.mu.Unlock()
	for _, ev := range registryEvents {
		_, err := rc.ha.SubscribeEvents(ctx, ev, func(homeassistant.Event) { rc.invalidate() })
		if err != nil {
			rc.mu.Lock()
			rc.watching = false
			rc.mu.Unlock()
			return
		}
	}
}

type listAreasArgs struct {
	Floor  string `json:"floor,omitempty" jsonschema:"id or name"`
	Search string `json:"search,omitempty"`
	toolkit.Page
}

type areaView struct {
	AreaID   string   `json:"area_id"`
	Name     string   `json:"name"`
	Floor    string   `json:"floor,omitempty"`
	Entities int      `json:"entities"`
	Devices  int      `json:"devices"`
	Labels   []string `json:"labels,omitempty"`
	Aliases  []string `json:"aliases,omitempty"`
}

type listLabelsArgs struct {
	Search string `json:"search,omitempty"`
	toolkit.Page
}

type labelView struct {
	LabelID     string `json:"label_id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Color       string `json:"color,omitempty"`
	Entities    int    `json:"entities"`
	Devices     int    `json:"devices"`
	Areas       int    `json:"areas"`
}

type listDevicesArgs struct {
	Area         string `json:"area,omitempty" jsonschema:"id or name"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Search       string `json:"search,omitempty" jsonschema:"text in name or model"`
	Detail       string `json:"detail,omitempty" validate:"omitempty,oneof=summary full"`
	toolkit.Page
}

type deviceView struct {
	DeviceID     string   `json:"device_id"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer,omitempty"`
	Model        string   `json:"model,omitempty"`
	Area         string   `json:"area,omitempty"`
	Entities     int      `json:"entities"`
	ModelID      string   `json:"model_id,omitempty"`
	SWVersion    string   `json:"sw_version,omitempty"`
	HWVersion    string   `json:"hw_version,omitempty"`
	Serial       string   `json:"serial_number,omitempty"`
	Labels       []string `json:"labels,omitempty"`
	ViaDeviceID  string   `json:"via_device_id,omitempty"`
	DisabledBy   string   `json:"disabled_by,omitempty"`
	EntryType    string   `json:"entry_type,omitempty"`
	EntityIDs    []string `json:"entity_ids,omitempty"`
}

func hasFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(sub)) }

// organisationTools are the registry tools, in the order tools/list shows them.
func organisationTools(d Deps) []*toolkit.Tool {
	return []*toolkit.Tool{listAreas(d), listLabels(d), listDevices(d)}
}

// listAreas is ha_list_areas.
func listAreas(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listAreasArgs, toolkit.List[areaView]]{
		Name: "ha_list_areas", Toolset: SetOrganisation, Title: "List areas",
		Description: "Areas (rooms) with floor, entity and device counts. Area ids filter ha_get_states, ha_search_entities, ha_list_devices. Paged.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listAreasArgs) (toolkit.List[areaView], error) {
			reg, err := registryOf(d.HA).get(ctx)
			if err != nil {
				return toolkit.List[areaView]{}, haError(err, false, "")
			}
			reg = scopedRegistry(ctx, reg)
			return reg.areaViews(a), nil
		},
	})
}

func (r *registry) areaViews(a listAreasArgs) toolkit.List[areaView] {
	entities, devices := map[string]int{}, map[string]int{}
	for id := range r.entities {
		entities[r.areaOf(id)]++
	}
	for _, dev := range r.devices {
		devices[strOf(dev.AreaID)]++
	}
	var out []areaView
	for _, ar := range r.areas {
		floor := r.floorName(ar)
		if a.Floor != "" && !strings.EqualFold(floor, a.Floor) && (ar.FloorID == nil || *ar.FloorID != a.Floor) {
			continue
		}
		if a.Search != "" && !hasFold(ar.ID+" "+ar.Name+" "+strings.Join(ar.Aliases, " "), a.Search) {
			continue
		}
		out = append(out, areaView{AreaID: ar.ID, Name: ar.Name, Floor: floor, Entities: entities[ar.ID], Devices: devices[ar.ID],
			Labels: ar.Labels, Aliases: ar.Aliases})
	}
	return toolkit.Paginate(out, a.Page)
}

// listLabels is ha_list_labels.
func listLabels(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listLabelsArgs, toolkit.List[labelView]]{
		Name: "ha_list_labels", Toolset: SetOrganisation, Title: "List labels",
		Description: "Labels with how many entities, devices and areas carry each. Label ids filter ha_get_states and ha_search_entities, or target ha_call_service. Paged.",
		ReadOnly:    true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listLabelsArgs) (toolkit.List[labelView], error) {
			reg, err := registryOf(d.HA).get(ctx)
			if err != nil {
				return toolkit.List[labelView]{}, haError(err, false, "")
			}
			reg = scopedRegistry(ctx, reg)
			return reg.labelViews(a), nil
		},
	})
}

func (r *registry) labelViews(a listLabelsArgs) toolkit.List[labelView] {
	ents, devs, areas := map[string]int{}, map[string]int{}, map[string]int{}
	for _, e := range r.entities {
		for _, l := range e.Labels {
			ents[l]++
		}
	}
	for _, dv := range r.devices {
		for _, l := range dv.Labels {
			devs[l]++
		}
	}
	for _, ar := range r.areas {
		for _, l := range ar.Labels {
			areas[l]++
		}
	}
	var out []labelView
	for _, l := range r.labels {
		if a.Search != "" && !hasFold(l.ID+" "+l.Name+" "+strOf(l.Description), a.Search) {
			continue
		}
		out = append(out, labelView{LabelID: l.ID, Name: l.Name, Description: strOf(l.Description), Color: strOf(l.Color),
			Entities: ents[l.ID], Devices: devs[l.ID], Areas: areas[l.ID]})
	}
	return toolkit.Paginate(out, a.Page)
}

// listDevices is ha_list_devices.
func listDevices(d Deps) *toolkit.Tool {
	return toolkit.Define(toolkit.Spec[listDevicesArgs, toolkit.List[deviceView]]{
		Name: "ha_list_devices", Toolset: SetOrganisation, Title: "List devices",
		Description: "Devices with manufacturer, model, area and entity count; detail=full adds versions, serial, labels, entity ids. Paged. " +
			"Entities and states: ha_get_states.",
		ReadOnly: true,
		Handler: func(ctx context.Context, c *toolkit.Call, a listDevicesArgs) (toolkit.List[deviceView], error) {
			reg, err := registryOf(d.HA).get(ctx)
			if err != nil {
				return toolkit.List[deviceView]{}, haError(err, false, "")
			}
			reg = scopedRegistry(ctx, reg)
			return reg.deviceViews(a)
		},
	})
}

func (r *registry) deviceViews(a listDevicesArgs) (toolkit.List[deviceView], error) {
	areaID := ""
	if a.Area != "" {
		ar := r.findArea(a.Area)
		if ar == nil {
			return toolkit.List[deviceView]{}, r.areaNotFound("area", a.Area)
		}
		areaID = ar.ID
	}
	byDevice := map[string][]string{}
	for id, e := range r.entities {
		if e.DeviceID != "" {
			byDevice[e.DeviceID] = append(byDevice[e.DeviceID], id)
		}
	}
	var out []deviceView
	for _, dv := range r.devices {
		if areaID != "" && strOf(dv.AreaID) != areaID ||
			a.Manufacturer != "" && !hasFold(strOf(dv.Manufacturer), a.Manufacturer) ||
			a.Search != "" && !hasFold(dv.DisplayName()+" "+strOf(dv.Model)+" "+strOf(dv.ModelID), a.Search) {
			continue
		}
		v := deviceView{DeviceID: dv.ID, Name: dv.DisplayName(), Manufacturer: strOf(dv.Manufacturer), Model: strOf(dv.Model),
			Area: r.areaName(strOf(dv.AreaID)), Entities: len(byDevice[dv.ID])}
		if a.Detail == "full" {
			ids := byDevice[dv.ID]
			slices.Sort(ids)
			v.ModelID, v.SWVersion, v.HWVersion, v.Serial = strOf(dv.ModelID), strOf(dv.SWVersion), strOf(dv.HWVersion), strOf(dv.SerialNumber)
			v.Labels, v.ViaDeviceID, v.DisabledBy, v.EntryType, v.EntityIDs = dv.Labels, strOf(dv.ViaDeviceID), strOf(dv.DisabledBy), strOf(dv.EntryType), ids
		}
		out = append(out, v)
	}
	return toolkit.Paginate(out, a.Page), nil
}

// placeFilter returns a test for entities in an area and/or carrying a label, nil when neither
// is asked for. Unknown areas and labels are argument errors that list the valid ones.
func placeFilter(ctx context.Context, ha *homeassistant.Client, area, label string) (func(entityID string) bool, error) {
	if area == "" && label == "" {
		return nil, nil
	}
	reg, err := registryOf(ha).get(ctx)
	if err != nil {
		return nil, haError(err, false, "")
	}
	var areaID, labelID string
	if area != "" {
		ar := reg.findArea(area)
		if ar == nil {
			return nil, reg.areaNotFound("area", area)
		}
		areaID = ar.ID
	}
	if label != "" {
		l := reg.findLabel(label)
		if l == nil {
			return nil, reg.labelNotFound("label", label)
		}
		labelID = l.ID
	}
	return func(id string) bool {
		return (areaID == "" || reg.areaOf(id) == areaID) && (labelID == "" || reg.hasLabel(id, labelID))
	}, nil
}
