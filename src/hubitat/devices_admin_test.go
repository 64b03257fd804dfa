package hubitat

import (
	"strings"
	"testing"
)

// The shapes upstream's tests pin for /device/fullJson (ToolDeviceAllowlistBypassSpec.fullJsonModel,
// ToolGetDeviceInUseBySpec) and the device page's list (vue-hub2.min.js populateDevices).
const (
	fullJSONSample = `{"device":{"id":555,"name":"Unlisted Switch","label":"Unlisted Switch","roomName":"Garage","roomId":4,
"deviceNetworkId":"ABCD","capabilities":["Switch"],"disabled":false,"typeName":"Generic Z-Wave Switch",
"settings":[{"name":"logEnable","type":"bool","value":true},{"name":"offset","type":"decimal","value":1.5}],
"currentStates":{"switch":{"name":"switch","value":"off","dataType":"ENUM","date":"2026-06-27T10:30:00.000-0600"}}},
"commands":[{"capability":"Switch","name":"on","arguments":[],"parameters":[]}],"dashboards":[{"id":3,"selected":true},{"id":4}],
"appsUsing":[{"id":12,"name":"Rule-5.1","label":"Lock <span>(Paused)</span>","trueLabel":"Lock","disabled":false}],
"appsUsingCount":2,"parentApp":null,"extraBreadcrumb":"Unlisted Switch","homeKitEnabled":true}`
	devicesListSample = `{"devices":[{"key":"DEV-1","data":{"id":1,"label":"Lamp","type":"Generic Zigbee Dimmer","roomId":2,
"lastActivity":"2026-06-27T10:30:00.000-0600","isZigbee":true,"currentStates":[{"key":"battery","value":"12"},{"key":"healthStatus","value":"offline"}]},
"children":[{"key":"DEV-2","data":{"id":"2","name":"Child","type":"Virtual Switch","lastActivity":null,"disabled":"true"},"children":[]}]}],"suggestBackup":false}`
)

func TestParseDeviceModel(t *testing.T) {
	t.Parallel()
	m, ok, err := ParseDeviceModel([]byte(fullJSONSample))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if m.ID != "555" || m.RoomID != "4" || m.RoomName != "Garage" || m.Disabled || len(m.Commands) != 1 || m.AppsUsingCount != 2 ||
		len(m.AppsUsing) != 1 || m.AppsUsing[0].Label != "Lock" || m.AppsUsing[0].Type != "Rule-5.1" {
		t.Fatalf("%+v", m)
	}
	if s, _ := m.Setting("offset"); s.Value != "1.5" || s.Type != "decimal" {
		t.Fatalf("setting %+v", s)
	}
	f := editForm(m, map[string]string{"label": "New"})
	// The form carries every field, so the hub blanks nothing: the room, the dashboards chosen,
	// true as "on".
	if f.Get("label") != "New" || f.Get("name") != "Unlisted Switch" || f.Get("roomId") != "4" || f.Get("dashboardIds") != "3" ||
		f.Get("homeKitEnabled") != "on" || f.Get("deviceNetworkId") != "ABCD" || f.Get("id") != "555" {
		t.Fatalf("form %v", f)
	}
	if _, ok, err := ParseDeviceModel([]byte(`{"device":null,"appsUsing":[]}`)); ok || err != nil {
		t.Fatal("an unknown id's answer read as a device", err)
	}
}

func TestParseDevicesList(t *testing.T) {
	t.Parallel()
	ds, err := ParseDevicesList([]byte(devicesListSample))
	if err != nil || len(ds) != 2 {
		t.Fatal(ds, err)
	}
	if d := ds[0]; d.Radio != "zigbee" || d.Battery == nil || *d.Battery != 12 || d.Health != "offline" || d.LastActivity.IsZero() || d.RoomID != "2" {
		t.Fatalf("%+v", d)
	}
	if d := ds[1]; d.Radio != "virtual" || !d.LastActivity.IsZero() || !d.Disabled {
		t.Fatalf("%+v", d)
	}
}

func TestParseVirtualDrivers(t *testing.T) {
	t.Parallel()
	ds, err := ParseVirtualDrivers([]byte(`{"drivers":[{"id":1,"name":"Virtual Switch","type":"sys"},{"id":2,"name":"Virtual Old","type":"dep"},
{"id":3,"name":"Generic Zigbee Outlet","type":"sys"},{"id":4,"name":"Virtual Thing","type":"usr","namespace":"me"},{"id":5,"name":"Virtual Hidden","category":"Hidden"}]}`))
	if err != nil || len(ds) != 2 || ds[0].Name != "Virtual Switch" || !ds[1].User {
		t.Fatal(ds, err)
	}
}

func TestRoomReply(t *testing.T) {
	t.Parallel()
	if err := roomReply("/room/save", ParseAdminReply(200, []byte(`{"error":"A room with that name already exists"}`))); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	for _, ok := range []string{`{"id":3,"name":"x"}`, `{"success":true}`, `OK`, ``, `{"error":null}`} {
		if err := roomReply("/room/save", ParseAdminReply(200, []byte(ok))); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func FuzzParseDeviceModel(f *testing.F) {
	f.Add([]byte(fullJSONSample))
	f.Add([]byte(`{"device":{"settings":[{"name":{}}],"id":"x"},"appsUsing":{},"appsUsingCount":"42+"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok, err := ParseDeviceModel(b)
		if err != nil || !ok {
			return
		}
		_ = editForm(m, map[string]string{"label": "x"})
		if m.AppsUsingCount < 0 {
			t.Fatalf("count %d", m.AppsUsingCount)
		}
	})
}

func FuzzParseDevicesList(f *testing.F) {
	f.Add([]byte(devicesListSample))
	f.Add([]byte(`{"devices":[{"data":{"id":1,"currentStates":[{"key":"battery","value":"NaN"}],"lastActivity":99999999999999999}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseDevicesList(b)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.ID == "" || d.Radio == "" {
				t.Fatalf("%+v", d)
			}
		}
	})
}

func FuzzParseVirtualDrivers(f *testing.F) {
	f.Add([]byte(`{"drivers":[{"id":1,"name":"Virtual Switch","type":"sys"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ParseVirtualDrivers(b)
		if err != nil {
			return
		}
		for _, d := range ds {
			if !strings.HasPrefix(d.Name, "Virtual") || d.ID == "" {
				t.Fatalf("%+v", d)
			}
		}
	})
}
