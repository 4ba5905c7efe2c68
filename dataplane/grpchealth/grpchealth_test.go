package grpchealth

import "testing"

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		want    Status
		wantErr bool
	}{
		{"serving", frame([]byte{0x08, 0x01}), StatusServing, false},
		{"no field: proto3's zero", frame(nil), StatusUnknown, false},
		{"unknown fields skipped", frame([]byte{0x12, 0x02, 'h', 'i', 0x08, 0x02, 0x1d, 1, 2, 3, 4}), StatusNotServing, false},
		{"too short", []byte{0, 0, 0}, 0, true},
		{"compressed", append([]byte{1}, frame(nil)[1:]...), 0, true},
		{"frame longer than the body", []byte{0, 0, 0, 0, 9, 0x08}, 0, true},
		{"truncated varint", frame([]byte{0x08, 0x80}), 0, true},
		{"length past the end", frame([]byte{0x12, 0x09, 'x'}), 0, true},
		{"group wire type", frame([]byte{0x0b}), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseResponse(tt.body)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseResponse(%x) = %v, %v; want %v, error %v", tt.body, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
