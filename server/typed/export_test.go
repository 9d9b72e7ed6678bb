package typed

// DecodeWithDecoder is Decode reading the body from a json.Decoder only,
// as it does when the scanner gives up.
var DecodeWithDecoder = decodeWithDecoder
