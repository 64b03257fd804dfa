package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"time"
)

// backupTar builds one Supervisor backup as found in /backup: <slug>.tar
// holding ./backup.json and gzipped tars of the backed-up parts.
func backupTar(o Options) (string, []byte, error) {
	slug := hexID("backup:" + o.Now.UTC().Format(time.RFC3339))[:8]
	date := o.Now.Add(-10 * time.Hour).Truncate(time.Hour).Add(45 * time.Minute).UTC()
	meta := map[string]any{
		"slug": slug, "version": 2, "name": "Automatic backup " + o.HAVersion, "date": date.Format("2006-01-02T15:04:05.000000+00:00"),
		"type": "partial", "supervisor_version": "2026.08.1",
		"extra":         map[string]any{"instance_id": hexID("instance"), "with_automatic_settings": true},
		"homeassistant": map[string]any{"version": o.HAVersion, "exclude_database": false, "size": 0.1},
		"compressed":    true, "protected": false, "crypto": nil,
		"repositories": []string{"core", "local", "https://github.com/hassio-addons/repository"},
		"folders":      []string{"ssl", "share"}, "addons": []any{}, "docker": map[string]any{"registries": map[string]any{}},
	}
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return "", nil, err
	}
	ha, err := gzTar(date, []entry{
		{"data/configuration.yaml", []byte("# configuration at backup time\ndefault_config:\n")},
		{"data/.HA_VERSION", []byte(o.HAVersion)},
	})
	if err != nil {
		return "", nil, err
	}
	ssl, err := gzTar(date, []entry{{"fullchain.pem", placeholderPEM("CERTIFICATE")}})
	if err != nil {
		return "", nil, err
	}
	outer, err := tarOf(date, []entry{{"./backup.json", metaJSON}, {"./homeassistant.tar.gz", ha}, {"./ssl.tar.gz", ssl}})
	return slug, outer, err
}

type entry struct {
	name string
	data []byte
}

func tarOf(mod time.Time, entries []entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: mod, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gzTar(mod time.Time, entries []entry) ([]byte, error) {
	inner, err := tarOf(mod, entries)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.ModTime = mod
	if _, err := zw.Write(inner); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// snapshotPNG draws a small camera-snapshot-like gradient.
func snapshotPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{uint8(40 + x*2), uint8(60 + y*3), 120, 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding an in-memory RGBA image cannot fail
	return buf.Bytes()
}
